// Review finding: quiet hours are checked only before the confirm stage, never again at the claim.
// What must hold: no send goes out inside the quiet hours without quietHoursOverride (README,
// Guardrails: "a daily window ... in which those sends are refused unless the call says
// quietHoursOverride: true"). On a 2025 host that elicits, the person's answer is awaited inside the
// call (up to 10 minutes); a question shown at 20:58 ("now outside them") and answered yes at 21:02
// must not send at 21:02 without an override: the send is refused (or the person asked again),
// and the API gets nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, countCarriedOut, inProcess, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe('review: quiet hours and a yes that comes later', () => {
  it('a yes given inside the quiet hours to a question shown before them sends nothing without an override', async () => {
    let clock = Date.UTC(2026, 2, 1, 20, 58); // 20:58 UTC, two minutes before the quiet hours
    const questions: string[] = [];
    const server = await inProcess(DOMAINS.inbox!, sandbox, {
      env: { ENGAGE_QUIET_HOURS: '21:00-08:00', ENGAGE_TIMEZONE: 'UTC' },
      server: { now: () => clock },
      elicit: (message) => {
        questions.push(message);
        clock = Date.UTC(2026, 2, 1, 21, 2); // the person answers four minutes later
        return { action: 'accept', content: { confirm: true } };
      },
    });
    try {
      const before = countCarriedOut(sandbox, 'inbox.ticket.reply');
      const result = await server.call('inbox.ticket.reply', { ticketID: 'TCK-1001', message: 'Balasan larut malam' });
      expect(questions[0]).toMatch(/now outside them/);
      // Must hold: at 21:02, inside 21:00-08:00, with no quietHoursOverride, nothing is sent.
      expect(countCarriedOut(sandbox, 'inbox.ticket.reply') - before, textOf(result)).toBe(0);
      expect(structuredOf(result).outcome).not.toBe('done');
    } finally {
      await server.close();
    }
  });
});
