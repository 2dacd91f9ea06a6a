// Review 43, a FIFO at a config's path (a named pipe a tool left there, or a test's) hung setup: it
// read the path as a file, and a read of a FIFO waits for a writer that never comes. Now every read
// of the person's file (and of the lock and backup setup makes beside it) opens it without waiting
// and refuses anything but a regular file, naming what it is; nothing is written.
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configPathIn, homePerTest, SETUP_CLI, type SetupRun } from './setup-run.js';

const home = homePerTest('engage-review43-fifo-');
const canMakeFifo = process.platform !== 'win32';

/** Setup run with a deadline: a run stuck on the FIFO is killed, and the test sees code null. */
function setupWithDeadline(args: string[], stdin: string): Promise<SetupRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SETUP_CLI, ...args], {
      env: { PATH: process.env.PATH, HOME: home.dir, XDG_CONFIG_HOME: join(home.dir, '.config') },
      cwd: home.dir,
      timeout: 8_000,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

describe.skipIf(!canMakeFifo)('a FIFO where the config goes', () => {
  it.each(['cursor', 'codex'] as const)(
    '%s: refused at once, naming it, and nothing written beside it',
    async (host) => {
      const path = configPathIn(home.dir, host);
      await mkdir(dirname(path), { recursive: true });
      execFileSync('mkfifo', [path]);
      const ran = await setupWithDeadline(
        ['--host', host, '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-stdin', '--yes'],
        'k-fifo-1234567890\n',
      );
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain(`${path} is a named pipe (FIFO), not a file`);
      expect(ran.stderr).toContain('nothing was changed');
      expect(await readdir(dirname(path))).toEqual([host === 'codex' ? 'config.toml' : 'mcp.json']);
    },
    15_000,
  );

  it('a FIFO where setup’s lock goes: refused at once, the config left', async () => {
    const path = configPathIn(home.dir, 'cursor');
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, '{"mcpServers": {}}\n');
    execFileSync('mkfifo', [`${path}.engage-setup.lock`]);
    const ran = await setupWithDeadline(
      ['--host', 'cursor', '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-stdin', '--yes'],
      'k-fifo-1234567890\n',
    );
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${path}.engage-setup.lock is a named pipe (FIFO), not a file; nothing was changed.`);
    expect(await readFile(path, 'utf8')).toBe('{"mcpServers": {}}\n');
  }, 15_000);
});
