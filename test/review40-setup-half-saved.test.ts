// Review 40, mergeIntoConfig reads the file again when the host saved it meanwhile (ae57452), but a
// host without an atomic rename truncates its file, then writes it: read again in between, the
// file was cut off mid-JSON, and setup ended on "… is not valid JSON", a file the person then found
// whole. Now a file that cannot be merged when read again is read once more after a moment, and
// merged once the host's save is whole; one that stays so is refused with its own words.
import { writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
  home = await mkdtemp(join(tmpdir(), 'engage-review40-halfsaved-'));
  configPath = join(home, '.claude.json');
  hostSaves.length = 0;
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
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
