// Review 17, a setting's name mistyped in the host's env block: ENGAGE_READONLY=true (for
// ENGAGE_READ_ONLY) or ENGAGE_CONFRIM=all started the server without a word, with every action
// tool offered and the default confirmation: the person believed it read-only. A name close to a
// setting of this server is reported on stderr at start now, with the setting it was likely
// meant for (names only, never values). Names of remote mode's settings stay quiet.
import { describe, expect, it } from 'vitest';
import { STARTABLE_ENV, startStderr } from './server-stderr.js';

/** The built contact server's stderr at start (info level, so its `ready` line ends the wait). */
const startLines = (env: Record<string, string>) => startStderr({ ...STARTABLE_ENV, ENGAGE_LOG_LEVEL: 'info', ...env }, { until: /ready: / });

describe('a mistyped setting name is reported at start', () => {
  it.each([
    ['ENGAGE_READONLY', 'true', 'ENGAGE_READ_ONLY'],
    ['ENGAGE_CONFRIM', 'all', 'ENGAGE_CONFIRM'],
    ['ENGAGE_OPERATION_DENY', '*.delete', 'ENGAGE_OPERATIONS_DENY'],
    ['ENGAGE_QUIETHOURS', '21:00-08:00', 'ENGAGE_QUIET_HOURS'],
    ['ENGAGE_APIKEY', 'eng_live_feedfacefeedfacefeedface', 'ENGAGE_API_KEY'],
  ])('%s=%s: named, with %s', async (name, value, meant) => {
    const stderr = await startLines({ [name]: value });
    expect(stderr).toContain(`${name} is not a setting of this server and was ignored: did you mean ${meant}?`);
    expect(stderr).not.toContain('feedface');
  });

  it('several in one line', async () => {
    const stderr = await startLines({ ENGAGE_READONLY: 'true', ENGAGE_CONFRIM: 'all' });
    const line = stderr.split('\n').find((text) => text.includes('ENGAGE_READONLY'));
    expect(line).toContain('ENGAGE_CONFRIM');
  });

  it("remote mode's settings and the right names are not reported", async () => {
    const stderr = await startLines({ ENGAGE_HTTP_PORT: '8080', ENGAGE_REDIS_URL: 'redis://localhost:6379', ENGAGE_READ_ONLY: 'true' });
    expect(stderr).toMatch(/ready: contact_read/);
    expect(stderr).not.toMatch(/not a setting/);
  });
});
