// `npm run serve -- --port 9000`: the service took no arguments but said nothing of it, and listened
// on 8787 with every setting as if nothing were given. An argument now refuses the start (status 2),
// naming where the settings go; --help says the same and exits 0.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, expect, it } from 'vitest';
import { stopService } from './service-process.js';

const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => stopService(child, 'SIGKILL')));
});

/** The built service with these arguments: how it ended, or that it printed its URL (it started). */
function serve(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string } | { started: true }> {
  const child = spawn(process.execPath, ['packages/http/dist/cli.js', ...args], {
    env: { PATH: process.env.PATH ?? '', ENGAGE_HTTP_PORT: '0', ENGAGE_BASE_URL: 'https://api.example.com' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.startsWith('{"url"')) resolve({ started: true });
    });
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

it('an argument refuses the start, naming the environment variables', async () => {
  const ended = await serve(['--port', '9000']);
  expect(ended).toMatchObject({ code: 2, stdout: '' });
  const { stderr } = ended as { stderr: string };
  expect(stderr).toContain('not started: engage-mcp-http takes no arguments: its settings are environment variables');
  expect(stderr).toContain('ENGAGE_HTTP_PORT');
  expect(stderr).toContain('Got \\"--port 9000\\"');
});

it('--help says where the settings go and exits 0', async () => {
  const ended = await serve(['--help']);
  expect(ended).toMatchObject({ code: 0, stderr: '' });
  expect((ended as { stdout: string }).stdout).toMatch(/^engage-mcp-http takes no arguments: its settings are environment variables/);
});
