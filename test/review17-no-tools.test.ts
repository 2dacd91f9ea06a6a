// Review 17, a server the allow and deny lists leave with nothing: ENGAGE_OPERATIONS_ALLOW naming
// only other servers' operations (one list for all seven, as the README suggests, with this
// server forgotten), ENGAGE_OPERATIONS_DENY=*, or an allow list of blanks and commas. The server
// started without a word and listed no tools, so the host showed it empty and the person could
// not tell why. It says so on stderr at start now, naming the settings.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/distribution.js';

/** The built campaign server's stderr at start (info level, so its `ready` line ends the wait). */
function startLines(env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, 'packages', 'campaign', 'dist', 'index.js')], {
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
      if (/ready: /.test(stderr)) child.kill();
    });
  });
}

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
