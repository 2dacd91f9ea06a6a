// Review 17, setup's questions at a terminal: an answer it could not take (a host name it did not
// know, a server misspelled, an address without https://) ended the run with a usage error, and
// every answer given before it was lost: the person started again from the first question. Now the
// question is asked again, saying what was wrong, and the earlier answers stand.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configPathIn, SETUP_CLI } from './setup-run.js';

const KEY = 'eng_live_5555eeee6666ffff7777aaaa8888bbbb';
let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review17-reask-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

/** The bin in a pseudo-terminal (util-linux script), each answer typed once the screen shows the text it answers. */
function atTerminal(dialogue: Array<[RegExp, string]>): Promise<{ code: number | null; screen: string }> {
  return new Promise((resolve, reject) => {
    const command = `${process.execPath} ${SETUP_CLI} --yes`;
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), SHELL: '/bin/sh' },
      cwd: home,
    });
    let screen = '';
    let next = 0;
    let answeredAt = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString();
      const step = dialogue[next];
      if (!step) return;
      const [prompt, reply] = step;
      const unseen = screen.slice(answeredAt);
      if (!prompt.test(unseen)) return;
      next += 1;
      answeredAt = screen.length;
      setTimeout(() => child.stdin.write(reply), 50);
    });
    child.on('error', reject);
    const guard = setTimeout(() => child.kill(), 20_000);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, screen });
    });
  });
}

describe.skipIf(!existsSync('/usr/bin/script'))('a wrong answer is asked again', () => {
  it('a host, a server and an address each mistyped once: asked again, then written', async () => {
    const { code, screen } = await atTerminal([
      [/Host: /, 'Zed\r'],
      [/unknown host "Zed"[\s\S]*Host: /, 'cursor\r'],
      [/Which servers\?/, 'contakt\r'],
      [/unknown server contakt[\s\S]*Which servers\?/, 'contact\r'],
      [/API base address/, 'api.example.com\r'],
      [/ENGAGE_BASE_URL is not a URL[\s\S]*API base address/, 'https://api.example.com\r'],
      [/API key/, `${KEY}\r`],
    ]);
    expect(code, screen).toBe(0);
    expect(screen).not.toContain(KEY);
    const written = JSON.parse(await readFile(configPathIn(home, 'cursor'), 'utf8'));
    expect(written.mcpServers['engage-contact'].env).toEqual({ ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: 'https://api.example.com' });
  });

  it('a key pasted with a blank inside, or none: asked again, and the key never shown', async () => {
    const { code, screen } = await atTerminal([
      [/Host: /, 'cursor\r'],
      [/Which servers\?/, 'contact\r'],
      [/API base address/, 'https://api.example.com\r'],
      [/API key/, 'eng_live 5555eeee\r'],
      [/contains spaces[\s\S]*API key/, '\r'],
      [/no API key was given[\s\S]*API key/, `${KEY}\r`],
    ]);
    expect(code, screen).toBe(0);
    expect(screen).not.toContain('5555eeee');
    const written = JSON.parse(await readFile(configPathIn(home, 'cursor'), 'utf8'));
    expect(written.mcpServers['engage-contact'].env.ENGAGE_API_KEY).toBe(KEY);
  });
});
