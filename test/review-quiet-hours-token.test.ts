// Review finding: quietHoursOverride is not bound to what the person saw.
// What must hold: a send inside the quiet hours runs only if the confirmation the person said yes
// to said "overridden (quietHoursOverride)". A confirmationToken issued for a preview that said
// "now outside them" (or said nothing of an override) must not carry a send made inside the quiet
// hours with quietHoursOverride: true added afterwards by the model: the person is asked again,
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

describe('review: quietHoursOverride and the token', () => {
  it('a token from a preview shown before the quiet hours does not carry an overridden send inside them', async () => {
    let clock = Date.UTC(2026, 2, 1, 20, 58); // 20:58 UTC, two minutes before the quiet hours
    const server = await inProcess(DOMAINS.inbox!, sandbox, {
      env: { ENGAGE_QUIET_HOURS: '21:00-08:00', ENGAGE_TIMEZONE: 'UTC' },
      server: { now: () => clock },
    });
    try {
      const params = { ticketID: 'TCK-1001', message: 'Balasan larut malam' };
      const preview = await server.call('inbox.ticket.reply', params);
      expect(structuredOf(preview).outcome).toBe('preview');
      // What the person saw: outside the quiet hours, no override.
      expect(structuredOf(preview).preview).toMatch(/now outside them/);
      expect(structuredOf(preview).preview).not.toMatch(/overridden/);
      const token = structuredOf(preview).confirmationToken as string;

      clock = Date.UTC(2026, 2, 1, 21, 2); // 21:02: inside the quiet hours; the token is still valid (5 min)
      const before = countCarriedOut(sandbox, 'inbox.ticket.reply');
      const sent = await server.call('inbox.ticket.reply', params, { confirmationToken: token, quietHoursOverride: true });
      // Must hold: nothing is sent on a yes that never saw the override.
      expect(countCarriedOut(sandbox, 'inbox.ticket.reply') - before, textOf(sent)).toBe(0);
      expect(structuredOf(sent).outcome).not.toBe('done');
    } finally {
      await server.close();
    }
  });
});
