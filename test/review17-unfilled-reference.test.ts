// Review 17, a key the host did not fill in: setup writes `${ENGAGE_API_KEY}` (Claude Code,
// Gemini CLI) or `${env:ENGAGE_API_KEY}` (Cursor) into a project's file, and a bundle
// `${user_config.api_key}`; a host that does not expand it, or a person who copies an entry
// between hosts, starts the server with that text as the key. It is printable ASCII, so it was
// taken as a key, and the first call said "The API refused the key (HTTP 401): it is invalid,
// revoked or expired. Create a new key": the person was sent to make a new key when the fix is
// the environment. The start-up line says what it is now, and nothing is sent with it.
import { describe, expect, it } from 'vitest';
import { STARTABLE_ENV, startStderr } from './server-stderr.js';

const startLine = (env: Record<string, string>) => startStderr({ ...STARTABLE_ENV, ENGAGE_LOG_LEVEL: 'info', ...env });

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
