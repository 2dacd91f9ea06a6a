// `npm run sandbox` as a newcomer mistypes it, and as a script reads it. A wrong flag, a port out of
// range or in use ended in Node's stack trace; a reader that closed the pipe (`| head -1`, a
// script that took the first line and went) killed the sandbox with EPIPE.
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { until } from './helpers.js';

const CLI = fileURLToPath(new URL('../packages/sandbox/dist/cli.js', import.meta.url));

function start(args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '' } });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

const children: ReturnType<typeof start>['child'][] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A port held by another listener for the test's length. */
async function heldPort(): Promise<number> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A port free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

it.each([
  [['--rate', '5'], /^sandbox: Unknown option '--rate'/],
  [['--port', '70000'], /^sandbox: --port must be a whole number from 0 to 65535/],
  [['--port', '1e3'], /^sandbox: --port must be a whole number from 0 to 65535/],
])('%j is refused in one line and the usage, exit 2, no stack trace', async (args, said) => {
  const sandbox = start(args);
  children.push(sandbox.child);
  expect(await sandbox.exited).toBe(2);
  expect(sandbox.stderr()).toMatch(said);
  expect(sandbox.stderr()).toContain('Usage: engage-sandbox');
  expect(sandbox.stderr()).not.toMatch(/\n\s+at /);
});

it('a port in use is said so, exit 1, no stack trace', async () => {
  const port = await heldPort();
  const sandbox = start(['--port', String(port)]);
  children.push(sandbox.child);
  expect(await sandbox.exited).toBe(1);
  expect(sandbox.stderr()).toBe(`sandbox: cannot listen on 127.0.0.1:${port}: it is in use; choose another, or --port 0 for any free one\n`);
});

it('goes on serving when its reader has closed the pipe', async () => {
  const port = await freePort();
  const sandbox = start(['--port', String(port)]);
  children.push(sandbox.child);
  // The reader is gone before the sandbox writes its first line.
  sandbox.child.stdout.destroy();
  const answers = async () => {
    if (sandbox.child.exitCode !== null) throw new Error(`the sandbox exited (${sandbox.child.exitCode}): ${sandbox.stderr()}`);
    return fetch(`http://127.0.0.1:${port}/api/user/users`).then(
      (answer) => answer.status === 401,
      () => false,
    );
  };
  await until('the sandbox answers', answers);
  expect(sandbox.stderr()).toBe('');
});
