// Review 22a: inbox.ticket.create takes a first message, which the agent side writes on the new
// ticket, as a reply does (inbox.ticket.reply, "delivered to the customer at once"). Attacked: a
// model held back by the owner's guardrails from replying to a customer opens a new ticket with
// the same customer instead, its text as the first message. Found: the quiet hours and the daily
// message cap held the reply and let the ticket's first message go out, uncounted. Now a ticket
// opened with a message is one message to the customer for both; one opened without a message
// sends nothing and is held by neither.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, countCarriedOut, inProcess, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await startSandbox();
});
afterEach(async () => sandbox?.close());

/** The customer of an open ticket: the reply and the new ticket reach the same person. */
function customer() {
  const ticket = sandbox.tenant('A').tickets.find((candidate) => candidate.status === 'open')!;
  return { ticketID: ticket.ticketID, msisdn: ticket.msisdn, channel: ticket.channel };
}

it('review22a: inside the quiet hours, a first message on a new ticket is held like a reply', async () => {
  const clock = Date.UTC(2026, 2, 1, 23, 14); // 23:14 UTC, inside 21:00-08:00
  const server = await inProcess(DOMAINS.inbox!, sandbox, {
    env: { ENGAGE_CONFIRM: 'none', ENGAGE_QUIET_HOURS: '21:00-08:00', ENGAGE_TIMEZONE: 'UTC' },
    server: { now: () => clock },
  });
  try {
    const { ticketID, msisdn, channel } = customer();
    const reply = await server.call('inbox.ticket.reply', { ticketID, message: 'Promo malam ini!' });
    expect(textOf(reply)).toMatch(/inside the quiet hours/);
    const opened = await server.call('inbox.ticket.create', { msisdn, channel, message: 'Promo malam ini!' });
    expect(countCarriedOut(sandbox, 'inbox.ticket.create'), textOf(opened)).toBe(0);
    expect(structuredOf(opened).outcome).toBe('refused');
    expect(textOf(opened)).toMatch(/inside the quiet hours 21:00-08:00 \(ENGAGE_QUIET_HOURS\).*nothing was sent/);
    // Without a message nothing reaches the customer: the quiet hours do not hold it.
    const blank = await server.call('inbox.ticket.create', { msisdn, channel });
    expect(structuredOf(blank).outcome, textOf(blank)).toBe('done');
    // With the override, as for a reply, it goes out.
    const overridden = await server.call('inbox.ticket.create', { msisdn, channel, message: 'Promo malam ini!' }, { quietHoursOverride: true });
    expect(structuredOf(overridden).outcome, textOf(overridden)).toBe('done');
  } finally {
    await server.close();
  }
});

it('review22a: the daily message cap counts a first message on a new ticket', async () => {
  const server = await inProcess(DOMAINS.inbox!, sandbox, { env: { ENGAGE_CONFIRM: 'none', ENGAGE_CAP_MESSAGES_PER_DAY: '1' } });
  try {
    const { ticketID, msisdn, channel } = customer();
    const first = await server.call('inbox.ticket.reply', { ticketID, message: 'Halo' });
    expect(structuredOf(first).outcome, textOf(first)).toBe('done');
    const opened = await server.call('inbox.ticket.create', { msisdn, channel, message: 'Halo lagi' });
    expect(countCarriedOut(sandbox, 'inbox.ticket.create'), textOf(opened)).toBe(0);
    expect(textOf(opened)).toMatch(/1 of the 1 messages ENGAGE_CAP_MESSAGES_PER_DAY allows per day .*nothing was sent/);
    // A ticket opened without a message uses none of the cap.
    const blank = await server.call('inbox.ticket.create', { msisdn, channel });
    expect(structuredOf(blank).outcome, textOf(blank)).toBe('done');
  } finally {
    await server.close();
  }
});
