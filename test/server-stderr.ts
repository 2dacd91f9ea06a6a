// A built stdio server's stderr at start, launched as a host launches it: what the start-up tests
// read (a setting's problem, a warning, the ready line). Nothing is ever sent to the API here.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../scripts/distribution.js';

/** A key and an address that pass the configuration's checks. */
export const STARTABLE_ENV = { ENGAGE_API_KEY: 'eng_live_0123456789abcdef0123', ENGAGE_BASE_URL: 'https://api.example.com' };

/**
 * What the built `domain` server wrote to stderr with `env` (and PATH) as its environment: up to its
 * first line, or with `until` up to the first match (the `ready` line, at info level), and the
 * server is then stopped; else up to its exit, or 10 s.
 */
export function startStderr(env: Record<string, string | undefined>, { domain = 'contact', until }: { domain?: string; until?: RegExp } = {}): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, 'packages', domain, 'dist', 'index.js')], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    const guard = setTimeout(() => child.kill(), 10_000);
    child.on('exit', () => {
      clearTimeout(guard);
      resolve(stderr);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (until ? until.test(stderr) : stderr.includes('\n')) child.kill();
    });
  });
}
