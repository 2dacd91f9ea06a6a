// Review 17, a key the host did not fill in: setup writes `${ENGAGE_API_KEY}` (Claude Code,
// Gemini CLI) or `${env:ENGAGE_API_KEY}` (Cursor) into a project's file, and a bundle
// `${user_config.api_key}`; a host that does not expand it, or a person who copies an entry
// between hosts, starts the server with that text as the key. It is printable ASCII, so it was
// taken as a key, and the first call said "The API refused the key (HTTP 401): it is invalid,
// revoked or expired. Create a new key": the person was sent to make a new key when the fix is
// the environment. The start-up line says what it is now, and nothing is sent with it.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/distribution.js';

function startLine(env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, 'packages', 'contact', 'dist', 'index.js')], {
    env: {
      PATH: process.env.PATH,
      ENGAGE_API_KEY: 'eng_live_0123456789abcdef0123',
      ENGAGE_BASE_URL: 'https://api.example.com',
      ENGAGE_LOG_LEVEL: 'info',
      ...env,
    },
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
      if (stderr.includes('\n')) child.kill();
    });
  });
}

describe('a reference the host did not fill in', () => {
  it.each(['${ENGAGE_API_KEY}', '${env:ENGAGE_API_KEY}', '$ENGAGE_API_KEY', '${user_config.api_key}', '${input:engage-api-key}'])(
    'ENGAGE_API_KEY=%s is named as such, not sent as a key',
    async (reference) => {
      const stderr = await startLine({ ENGAGE_API_KEY: reference });
      expect(stderr).toMatch(/not configured/);
      expect(stderr).toContain(
        'ENGAGE_API_KEY is a reference to a variable (${…} or $NAME) that the host did not fill in: set ENGAGE_API_KEY in the environment the host starts in.',
      );
    },
  );

  it('ENGAGE_BASE_URL=${ENGAGE_BASE_URL} likewise', async () => {
    const stderr = await startLine({ ENGAGE_BASE_URL: '${ENGAGE_BASE_URL}' });
    expect(stderr).toContain('ENGAGE_BASE_URL is a reference to a variable (${…} or $NAME) that the host did not fill in');
  });

  it('a key with a dollar inside it is still a key', async () => {
    const stderr = await startLine({ ENGAGE_API_KEY: 'eng_live_ab$cd0123456789abcdef' });
    expect(stderr).toMatch(/ready: /);
  });
});
