// Review 39, the host saving its config while setup writes it: setup read the file under its lock,
// merged, and wrote the result over it, but the host takes no lock (Claude Code saves ~/.claude.json
// on every start and many events), so a save between setup's read and its rename was lost: the
// host's own settings, or a server the person had just added. The file is now read again just
// before the new one takes its place; if it changed, the merge is made again from it, and a file
// that keeps changing is left as it is, with a message.
// Review 40, mergeIntoConfig reads the file again when the host saved it meanwhile (ae57452), but a
// host without an atomic rename truncates its file, then writes it: read again in between, the
// file was cut off mid-JSON, and setup ended on "… is not valid JSON", a file the person then found
// whole. Now a file that cannot be merged when read again is read once more after a moment, and
// merged once the host's save is whole; one that stays so is refused with its own words.
import { writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigRefused } from '../packages/setup/src/config-error.js';

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

const WHOLE = '{"numStartups": 2, "mcpServers": {"added-meanwhile": {"command": "x"}}}\n';
const HALF = WHOLE.slice(0, 30);

/** Setup's merge, in miniature: our server added, a file that is no JSON refused as setup refuses it. */
function addOurs(current: string | undefined): string {
  let config: Record<string, Record<string, unknown>>;
  try {
    config = JSON.parse(current ?? '{}');
  } catch {
    throw new ConfigRefused(`${configPath} is not valid JSON; nothing was changed.`);
  }
  return `${JSON.stringify({ ...config, mcpServers: { ...config.mcpServers, 'engage-contact': { command: 'npx' } } })}\n`;
}

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

describe('the host half way through a save when setup reads its file again', () => {
  it('merges into the save once it is whole', async () => {
    await writeFile(configPath, '{"numStartups": 1, "mcpServers": {}}\n');
    hostSaves.push(HALF);
    // The host finishes its write just after setup read the half of it.
    const merge = (current: string | undefined) => {
      if (current === HALF) writeFileSync(configPath, WHOLE);
      return addOurs(current);
    };
    await mergeIntoConfig(configPath, merge, true);
    expect(JSON.parse(await readFile(configPath, 'utf8'))).toEqual({
      numStartups: 2,
      mcpServers: { 'added-meanwhile': { command: 'x' }, 'engage-contact': { command: 'npx' } },
    });
  });

  it('refuses, with the file’s own problem, one that stays cut off', async () => {
    await writeFile(configPath, '{"numStartups": 1, "mcpServers": {}}\n');
    hostSaves.push(HALF);
    await expect(mergeIntoConfig(configPath, addOurs, true)).rejects.toThrow('is not valid JSON; nothing was changed.');
    expect(await readFile(configPath, 'utf8')).toBe(HALF);
  });
});
