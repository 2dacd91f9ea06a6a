// The README's first command, and the sandbox's command line, as a person runs them.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

function run(script: string, args: string[] = []) {
  const child = spawn(process.execPath, [path(script), ...args], { env: { PATH: process.env.PATH ?? '' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Its first line, however long a loaded machine takes to start it (not a poll's 1 s); its stderr if it exits first.
  const firstLine = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      if (stdout.includes('\n')) resolve(stdout.split('\n')[0] as string);
    });
    void exited.then((code) => reject(new Error(`exited with ${code} before a first line: ${stderr}`)));
  });
  firstLine.catch(() => undefined);
  return { child, exited, firstLine, stdout: () => stdout, stderr: () => stderr };
}

describe('npm start (the demo)', () => {
  it('runs a real session to completion: preview, confirm, send once, progress, reply, quota', async () => {
    const demo = run('../packages/sandbox/dist/demo.js');
    expect(await demo.exited, demo.stderr()).toBe(0);
    const out = demo.stdout();
    expect(out).toMatch(/contact_read \(2 operations, read-only\), contact_action \(4 operations\)/);
    expect(out).toMatch(/Confirmation needed: campaign\.send has NOT been run/);
    expect(out).toMatch(/campaign\.send carried out 0 time\(s\) so far/);
    expect(out).toMatch(/Done: campaign\.send was carried out/);
    expect(out).toMatch(/"status":"completed"/);
    expect(out).toMatch(/Done: inbox\.ticket\.reply was carried out/);
    expect(out).toMatch(/billing\.quota/);
    expect(out.match(/^ {3}campaign\.send \{/gm)).toHaveLength(1);
  });
});

describe('npm run sandbox', () => {
  it('prints its address and keys as JSON on the first line, then a summary, and stops on SIGTERM', async () => {
    const sandbox = run('../packages/sandbox/dist/cli.js', ['--port', '0', '--rate-limit', '100']);
    const first = JSON.parse(await sandbox.firstLine);
    expect(first.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Object.keys(first.keys)).toEqual(expect.arrayContaining(['full', 'readOnly', 'expired', 'revoked']));
    const answer = await fetch(`${first.baseUrl}/api/user/users`, { headers: { 'x-api-key': first.keys.full } });
    expect(answer.headers.get('ratelimit-limit')).toBe('100');
    sandbox.child.kill('SIGTERM');
    expect(await sandbox.exited).toBe(0);
  });

  it('refuses a bad flag clearly', async () => {
    const sandbox = run('../packages/sandbox/dist/cli.js', ['--port', 'eighty']);
    expect(await sandbox.exited).toBe(2);
    expect(sandbox.stderr()).toMatch(/--port must be a whole number/);
  });
});
