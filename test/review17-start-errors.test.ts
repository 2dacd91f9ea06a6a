// Review 17, a newcomer starting a built server with a setting wrong: the one line on stderr must
// say what to fix. Three lines did not:
// - ENGAGE_AUTH_HEADER=foo: the log's redaction of "bearer <value>" took "(got" for a token, so
//   the line read `must be one of x-api-key, bearer [redacted] "foo").`
// - the README's entry copied with its placeholders left in (`<your tenant API key>`, or the
//   `https://…` of its `claude mcp add` line): `ENGAGE_API_KEY contains spaces or control
//   characters` (or `characters beyond ASCII`) and `ENGAGE_BASE_URL is not a URL`, neither saying
//   the placeholder is still there.
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

  it("the README's key placeholder left in: the line says to replace it with the key", async () => {
    const { stderr, stdout } = await startLine({ ENGAGE_API_KEY: '<your tenant API key>' });
    expect(stderr).toMatch(/ENGAGE_API_KEY is still a placeholder from the README: replace it with the tenant API key/);
    expect(stderr).not.toMatch(/spaces or control characters/);
    expect(stdout).toBe('');
  });

  it("the README's address placeholder left in: the line says to replace it with the address", async () => {
    const { stderr } = await startLine({ ENGAGE_BASE_URL: 'https://<your API base address>' });
    expect(stderr).toMatch(/ENGAGE_BASE_URL is still a placeholder from the README: replace it with the API's base address/);
    expect(stderr).not.toMatch(/is not a URL/);
  });

  it.each([
    ['ENGAGE_API_KEY', '…', /ENGAGE_API_KEY is still a placeholder from the README: replace it with the tenant API key/],
    ['ENGAGE_BASE_URL', 'https://…', /ENGAGE_BASE_URL is still a placeholder from the README: replace it with the API's base address/],
  ])("the README's `claude mcp add` line copied as it is (%s=%s): the line says to replace it", async (name, value, expected) => {
    const { stderr } = await startLine({ [name]: value });
    expect(stderr).toMatch(expected);
  });

  it('the line never holds the key, whatever placeholder is around it', async () => {
    const { stderr } = await startLine({ ENGAGE_API_KEY: `<${KEY}>` });
    expect(stderr).toMatch(/ENGAGE_API_KEY is still a placeholder/);
    expect(stderr).not.toContain(KEY.slice('eng_live_'.length, 'eng_live_'.length + 16));
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
