// Review 43, backups piled up: every run that changed the file left `<file>.backup-<time>` beside
// it, each holding the key, and none was ever removed. Now a run keeps the newest ten of its
// backups and removes older ones, saying so; a file it did not make is never removed, even named as
// a backup is (a link, a file others may read, one with other names, another name altogether).
import { chmod, link, mkdir, readdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configPathIn, homePerTest, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review43-backups-');
const KEY = 'k-backups-1234567890';

/** A backup as an earlier run left it: the file's name, a stamp, 0600. */
async function earlierBackup(path: string, stamp: string): Promise<string> {
  const backup = `${path}.backup-${stamp}`;
  await writeFile(backup, '{"mcpServers": {}}\n', { mode: 0o600 });
  await chmod(backup, 0o600);
  return backup;
}

describe('backups beside the config', () => {
  it('keeps the newest ten of its own and removes older ones, saying how many', async () => {
    const path = configPathIn(home.dir, 'cursor');
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, '{"mcpServers": {}}\n');
    const stamps = [
      '20240101-000000',
      '20240101-000000-2',
      '20240101-000000-10',
      ...['02', '03', '04', '05', '06', '07', '08', '09'].map((month) => `2024${month}01-000000`),
    ];
    for (const stamp of stamps) await earlierBackup(path, stamp);
    const ran = await setupWithKey(home.dir, 'cursor', KEY);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const backups = (await readdir(dirname(path))).filter((name) => name.startsWith('mcp.json.backup-')).sort();
    // Twelve with this run's: the two oldest went (-2 before -10, as they were made).
    expect(backups).toHaveLength(10);
    expect(backups).not.toContain('mcp.json.backup-20240101-000000');
    expect(backups).not.toContain('mcp.json.backup-20240101-000000-2');
    expect(backups).toContain('mcp.json.backup-20240101-000000-10');
    expect(ran.stdout).toContain('2 older backups of it were removed (setup keeps the newest 10).');
  });

  it('removes nothing it did not make, whatever its name', async () => {
    const path = configPathIn(home.dir, 'cursor');
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, '{"mcpServers": {}}\n');
    for (const day of ['02', '03', '04', '05', '06', '07', '08', '09', '10', '11']) await earlierBackup(path, `202501${day}-000000`);
    const folder = dirname(path);
    const people = ['mcp.json.backup-20200101-000000-readable', 'mcp.json.backup-old', 'mcp.json.backup-20200101-000000.txt'];
    for (const name of people) await writeFile(join(folder, name), 'mine');
    await writeFile(join(folder, 'mcp.json.backup-20200102-000000'), 'mine, readable', { mode: 0o644 });
    await chmod(join(folder, 'mcp.json.backup-20200102-000000'), 0o644);
    await writeFile(join(home.dir, 'elsewhere'), 'mine', { mode: 0o600 });
    await symlink(join(home.dir, 'elsewhere'), join(folder, 'mcp.json.backup-20200103-000000'));
    await link(join(home.dir, 'elsewhere'), join(folder, 'mcp.json.backup-20200104-000000'));
    await chmod(join(home.dir, 'elsewhere'), 0o600);
    await utimes(join(home.dir, 'elsewhere'), new Date(0), new Date(0));
    const ran = await setupWithKey(home.dir, 'cursor', KEY);
    expect(ran.code).toBe(0);
    const left = await readdir(folder);
    for (const name of [...people, 'mcp.json.backup-20200102-000000', 'mcp.json.backup-20200103-000000', 'mcp.json.backup-20200104-000000'])
      expect(left).toContain(name);
    // Its own: ten before, eleven with this run's, the oldest removed.
    expect(left).not.toContain('mcp.json.backup-20250102-000000');
    expect(left.filter((name) => /^mcp\.json\.backup-2025/.test(name) || /^mcp\.json\.backup-\d{8}-\d{6}$/.test(name))).toHaveLength(10 + 3);
  });
});
