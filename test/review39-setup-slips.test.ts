// Review 39, a careless person's slips that setup answered badly. --config-path "$FILE" with FILE
// unset (or a folder's path, ending in a slash) got as far as the rename and said
// " cannot be written (ENOENT: …, rename '.engage-setup-….tmp' -> '')". A folder where the host's
// file goes said "cannot be read (EISDIR)", nothing on what to do. Ctrl-C at a question (not the
// key's) said "Aborted with Ctrl+C", not whether anything was written. Now the empty or folder
// path is refused before any question, the folder is named as one with what to do, and Ctrl-C at
// any question says it cancelled and nothing was changed.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configPathIn, homePerTest, SETUP_CLI, setupWith, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review39-slips-');
const KEY = 'eng_live_39f0e1d2c3b4a5968778695a4b3c2d1e';

describe('--config-path that names no file', () => {
  it.each([[''], ['.cursor/']])('%j: refused before anything, saying what to give', async (given) => {
    const args = ['--host', 'cursor', '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-stdin', '--yes', '--config-path', given];
    const ran = await setupWith(home.dir, args, `${KEY}\n`);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(`--config-path ${JSON.stringify(given)} names no file: give the config file's own path`);
    expect(await readdir(home.dir)).toEqual([]);
  });

  it('with --print too', async () => {
    const ran = await setupWith(home.dir, ['--host', 'claude-code', '--servers', 'contact', '--print', '--config-path', ''], '');
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('names no file');
  });
});

it('a folder where the host’s file goes: named as one, with what to do', async () => {
  const path = configPathIn(home.dir, 'cursor');
  await mkdir(path, { recursive: true });
  const ran = await setupWithKey(home.dir, 'cursor', KEY);
  expect(ran.code).toBe(1);
  expect(ran.stderr).toContain(`${path} is a folder, where a config file was expected; nothing was changed. Move the folder aside`);
});

/** The bin in a pseudo-terminal (util-linux script): `reply` typed once `prompt` shows. */
function atTerminal(dialogue: Array<[RegExp, string]>): Promise<{ code: number | null; screen: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', `${process.execPath} ${SETUP_CLI}`, '/dev/null'], {
      env: { PATH: process.env.PATH, HOME: home.dir, XDG_CONFIG_HOME: join(home.dir, '.config'), SHELL: '/bin/sh' },
      cwd: home.dir,
    });
    let screen = '';
    let answeredAt = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString();
      const step = dialogue[0];
      if (!step?.[0].test(screen.slice(answeredAt))) return;
      dialogue.shift();
      answeredAt = screen.length;
      setTimeout(() => child.stdin.write(step[1]), 50);
    });
    child.on('error', reject);
    const guard = setTimeout(() => child.kill(), 20_000);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, screen });
    });
  });
}

describe.skipIf(!existsSync('/usr/bin/script'))('Ctrl-C at a question', () => {
  it.each([
    ['the host', [[/Host: /, '\u0003']]],
    [
      'the confirmation',
      [
        [/Host: /, 'cursor\r'],
        [/Which servers\?/, 'contact\r'],
        [/API base address/, 'https://api.example.com\r'],
        [/API key/, `${KEY}\r`],
        [/Write this\?/, '\u0003'],
      ],
    ],
  ] as const)('%s: says it cancelled and nothing was changed', async (_, dialogue) => {
    const { code, screen } = await atTerminal(dialogue.map(([prompt, reply]) => [prompt, reply]));
    expect(code, screen).toBe(1);
    expect(screen).toContain('engage-mcp-setup: cancelled; nothing was changed.');
    expect(screen).not.toContain(KEY);
    expect(await readdir(home.dir)).toEqual([]);
  });
});
