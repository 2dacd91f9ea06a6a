// Review 17, a server the allow and deny lists leave with nothing: ENGAGE_OPERATIONS_ALLOW naming
// only other servers' operations (one list for all seven, as the README suggests, with this
// server forgotten), ENGAGE_OPERATIONS_DENY=*, or an allow list of blanks and commas. The server
// started without a word and listed no tools, so the host showed it empty and the person could
// not tell why. It says so on stderr at start now, naming the settings.
import { describe, expect, it } from 'vitest';
import { STARTABLE_ENV, startStderr } from './server-stderr.js';

/** The built campaign server's stderr at start (info level, so its `ready` line ends the wait). */
const startLines = (env: Record<string, string>) =>
  startStderr({ ...STARTABLE_ENV, ENGAGE_LOG_LEVEL: 'info', ...env }, { domain: 'campaign', until: /ready: / });

describe('a server left with no tools says why', () => {
  it.each([
    ['an allow list of other servers', { ENGAGE_OPERATIONS_ALLOW: 'contact.*,inbox.ticket.list' }],
    ['a deny list of everything', { ENGAGE_OPERATIONS_DENY: '*' }],
    ['an allow list of blanks and commas', { ENGAGE_OPERATIONS_ALLOW: ' , ' }],
  ])('%s', async (_, env) => {
    const stderr = await startLines(env);
    expect(stderr).toMatch(
      /warn: no tools to offer: ENGAGE_OPERATIONS_ALLOW and ENGAGE_OPERATIONS_DENY leave none of this server's operations \(campaign\.list, .*campaign\.delete\)/,
    );
  });

  it('an allow list naming one of its operations: no such line', async () => {
    const stderr = await startLines({ ENGAGE_OPERATIONS_ALLOW: 'contact.*,campaign.list' });
    expect(stderr).toMatch(/ready: campaign_read/);
    expect(stderr).not.toMatch(/no tools/);
  });
});
