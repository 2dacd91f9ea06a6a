// Review 31, setup against big configs: two checks cost time with the square of the file.
// - JSON: before our entry is written anew, each key and number in it is checked (respelled
//   numbers, keys given twice), and each check worked out its line and column first, counting
//   lines from the file's start, though only a refusal says them: an entry of 40,000 settings
//   (1 MB) took minutes. The place is worked out only for a refusal now.
// - TOML: every key = value line copied its table's whole dotted path to look at two parts of it:
//   under a header of 40,000 dotted parts, 40,000 lines (430 KB) took three minutes. Now only the
//   two parts are taken.
// Each run is given far more time than it needs now (about a second) and far less than it took.
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import type { HostId } from '../packages/setup/src/hosts.js';
import { configPathIn, homePerTest, SETUP_CLI } from './setup-run.js';

const home = homePerTest('engage-review31-big-');
const KEY = 'sk_live_31b2d4f6a8c0e2b4d6f8';
/** Time enough for a run that takes time in proportion to the file; the child is ended after it. */
const ENOUGH_MS = 40_000;

/** setupOverConfig's run, ended after ENOUGH_MS: the exit code (null when it was ended) and the file after. */
async function setupOverBig(host: HostId, text: string): Promise<{ code: number | null; stderr: string; after: string }> {
  const path = configPathIn(home.dir, host);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
  const args = ['--host', host, '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-stdin', '--yes'];
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [SETUP_CLI, ...args], {
      env: { PATH: process.env.PATH, HOME: home.dir, XDG_CONFIG_HOME: join(home.dir, '.config') },
      cwd: home.dir,
      timeout: ENOUGH_MS,
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
    child.stdin.end(`${KEY}\n`);
  });
  return { code, stderr, after: await readFile(path, 'utf8') };
}

const SETTINGS = 40_000;

describe('a big config', () => {
  it('JSON: our entry with 40,000 settings of the person is rewritten, all of them kept', async () => {
    const env = Object.fromEntries(Array.from({ length: SETTINGS }, (_, index) => [`SETTING_${index}`, index]));
    const text = JSON.stringify({ mcpServers: { 'engage-contact': { command: 'old', env } } }, null, 2);
    const { code, stderr, after } = await setupOverBig('cursor', text);
    expect(code, stderr).toBe(0);
    const written = JSON.parse(after).mcpServers['engage-contact'];
    expect(written.command).toBe('npx');
    expect(written.env).toEqual({ ...env, ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: 'https://api.example.com' });
  }, 60_000);

  it('TOML: 40,000 lines under a header of 40,000 dotted parts: our tables added, the rest kept', async () => {
    const lines = Array.from({ length: SETTINGS }, (_, index) => `setting_${index} = ${index}\n`).join('');
    const text = `[${Array(SETTINGS).fill('a').join('.')}]\n${lines}`;
    const { code, stderr, after } = await setupOverBig('codex', text);
    expect(code, stderr).toBe(0);
    expect(after.startsWith(text)).toBe(true);
    // The tables added after the person's (smol-toml would nest 40,000 deep for the rest).
    expect(parseToml(after.slice(text.length))).toMatchObject({ mcp_servers: { 'engage-contact': { command: 'npx' } } });
  }, 60_000);
});
