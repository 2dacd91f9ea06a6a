// Review 17, a newcomer starting a built server with a setting wrong: the one line on stderr must
// say what to fix. Lines that did not:
// - ENGAGE_AUTH_HEADER=foo: the log's redaction of "bearer <value>" took "(got" for a token, so
//   the line read `must be one of x-api-key, bearer [redacted] "foo").`
// - ENGAGE_CONFIRM=sometimes: the example patterns it gave named -inbox.ticket.assign, an
//   operation no server has, so following the example stopped the inbox server.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { loadConfig } from '@engage-mcp/shared';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/distribution.js';
import { DOMAINS } from './helpers.js';

const KEY = 'eng_live_0123456789abcdef0123456789abcdef01234567';

/** The built contact server's stderr up to its first line, with what stdout held by then. */
function startLine(env: Record<string, string>): Promise<{ stderr: string; stdout: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'packages', 'contact', 'dist', 'index.js')], {
    env: { PATH: process.env.PATH, ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: 'https://api.example.com', ...env },
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    // A server that takes the setting prints nothing: end it rather than wait for the test's timeout.
    const guard = setTimeout(() => child.kill(), 10_000);
    child.on('exit', () => {
      clearTimeout(guard);
      resolve({ stderr, stdout });
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!stderr.includes('\n')) return;
      child.kill();
      resolve({ stderr, stdout });
    });
  });
}

describe('a wrong setting gives one line on stderr that says what to fix', () => {
  it('ENGAGE_AUTH_HEADER=foo: the line shows what was given, nothing of it taken for a credential', async () => {
    const { stderr, stdout } = await startLine({ ENGAGE_AUTH_HEADER: 'foo' });
    expect(stderr).toMatch(/ENGAGE_AUTH_HEADER must be one of x-api-key, bearer, not "foo"\./);
    expect(stderr).not.toContain('[redacted]');
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stdout).toBe('');
  });
});

describe("ENGAGE_CONFIRM's own examples", () => {
  it('every pattern the message suggests is taken by every server', async () => {
    const { stderr } = await startLine({ ENGAGE_CONFIRM: 'sometimes' });
    const examples = /operationId patterns \(([^)]*)\)/.exec(stderr)?.[1]?.split(', ') ?? [];
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) {
      for (const domain of Object.values(DOMAINS)) {
        const operationIds = domain.operations.map((op) => op.id);
        const result = loadConfig(
          { ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: 'https://api.example.com', ENGAGE_CONFIRM: `all,${example}` },
          domain.name,
          operationIds,
        );
        expect(result.ok ? [] : result.problems, `${example} on ${domain.name}`).toEqual([]);
      }
    }
  });
});
