// Review 39, the host saving its config while setup writes it: setup read the file under its lock,
// merged, and wrote the result over it, but the host takes no lock (Claude Code saves ~/.claude.json
// on every start and many events), so a save between setup's read and its rename was lost: the
// host's own settings, or a server the person had just added. The file is now read again just
// before the new one takes its place; if it changed, the merge is made again from it, and a file
// that keeps changing is left as it is, with a message.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** What the host saves while setup's new text is being written, once per entry (each save a write). */
const hostSaves: string[] = [];
let configPath = '';

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const open: typeof fs.open = async (...args) => {
    const handle = await fs.open(...args);
    if (!String(args[0]).includes('.engage-setup-')) return handle;
    const writeNew = handle.writeFile.bind(handle);
    handle.writeFile = async (...written: Parameters<typeof handle.writeFile>) => {
      const save = hostSaves.shift();
      if (save !== undefined) await fs.writeFile(configPath, save);
      return writeNew(...written);
    };
    return handle;
  };
  return { ...fs, default: { ...fs, open }, open };
});

const { mergeIntoConfig } = await import('../packages/setup/src/files.js');

/** Setup's merge, in miniature: our server added to whatever the file holds. */
const addOurs = (current: string | undefined) => {
  const config = JSON.parse(current ?? '{}');
  return `${JSON.stringify({ ...config, mcpServers: { ...config.mcpServers, 'engage-contact': { command: 'npx' } } })}\n`;
};

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review39-saves-'));
  configPath = join(home, '.claude.json');
  hostSaves.length = 0;
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('the host saving its config while setup writes it', () => {
  it("keeps the host's save, our server merged into it", async () => {
    await writeFile(configPath, '{"numStartups": 1, "mcpServers": {}}\n');
    hostSaves.push('{"numStartups": 2, "mcpServers": {"added-meanwhile": {"command": "x"}}}\n');
    const written = await mergeIntoConfig(configPath, addOurs, true);
    expect(written?.path).toBe(configPath);
    expect(JSON.parse(await readFile(configPath, 'utf8'))).toEqual({
      numStartups: 2,
      mcpServers: { 'added-meanwhile': { command: 'x' }, 'engage-contact': { command: 'npx' } },
    });
    // One backup, of the file the write replaced: the host's save.
    const backups = (await readdir(home)).filter((name) => name.includes('.backup-'));
    expect(backups).toHaveLength(1);
    expect(await readFile(join(home, backups[0] as string), 'utf8')).toContain('added-meanwhile');
  });

  it('keeps a file the host made meanwhile where there was none', async () => {
    hostSaves.push('{"userID": "made-by-the-host"}\n');
    await mergeIntoConfig(configPath, addOurs, true);
    expect(JSON.parse(await readFile(configPath, 'utf8'))).toEqual({ userID: 'made-by-the-host', mcpServers: { 'engage-contact': { command: 'npx' } } });
  });

  it('leaves a file that keeps changing as the host last saved it, and says so', async () => {
    await writeFile(configPath, '{"numStartups": 1}\n');
    hostSaves.push('{"numStartups": 2}\n', '{"numStartups": 3}\n', '{"numStartups": 4}\n');
    await expect(mergeIntoConfig(configPath, addOurs, true)).rejects.toThrow(
      'changed each time setup was about to replace it (the host saving it, say); nothing was changed. Quit the host, then run again.',
    );
    expect(await readFile(configPath, 'utf8')).toBe('{"numStartups": 4}\n');
    expect(await readdir(home)).toEqual(['.claude.json']);
  });
});
