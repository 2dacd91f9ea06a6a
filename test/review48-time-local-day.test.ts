// Review 48 (time): a refusal named a local time that does not come. The daily cap's refusal said
// the count resets at "<the next date> 00:00", and the quiet hours' said they end at the window's
// end as written; but a day may begin at 01:00 (Chile's clocks go from 24:00 to 01:00 when daylight
// saving begins), a date may be skipped (Samoa went from 2011-12-29 to 2011-12-31), and a window's
// end may fall in the hour (or, on Lord Howe Island, the half hour) the clocks skip. Each is now read
// from the zone: the time the clocks show when the next day begins, or when the quiet hours end.
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

const REPLY = 'inbox.ticket.reply';
const params = { ticketID: 'TCK-1001', message: 'Balasan' };

/** An inbox server whose clock reads `at` (UTC), with these guardrails, sending without a yes. */
function inboxAt(at: string, env: Record<string, string>) {
  return inProcess(DOMAINS.inbox!, sandbox, { env: { ENGAGE_CONFIRM: 'none', ...env }, server: { now: () => Date.parse(at) } });
}

/** The daily cap of one message, used, then a second send: its refusal's text. */
async function secondSendOfTheDay(at: string, timeZone: string): Promise<string> {
  const server = await inboxAt(at, { ENGAGE_CAP_MESSAGES_PER_DAY: '1', ENGAGE_TIMEZONE: timeZone });
  try {
    const first = await server.call(REPLY, params);
    expect(structuredOf(first).outcome, textOf(first)).toBe('done');
    const before = countCarriedOut(sandbox, REPLY);
    const second = await server.call(REPLY, params);
    expect(structuredOf(second).outcome, textOf(second)).toBe('refused');
    expect(countCarriedOut(sandbox, REPLY)).toBe(before);
    return textOf(second);
  } finally {
    await server.close();
  }
}

/** A send inside the quiet hours `window`: its refusal's text. */
async function quietRefusal(at: string, timeZone: string, window: string): Promise<string> {
  const server = await inboxAt(at, { ENGAGE_QUIET_HOURS: window, ENGAGE_TIMEZONE: timeZone });
  try {
    const refused = await server.call(REPLY, params);
    expect(structuredOf(refused).outcome, textOf(refused)).toBe('refused');
    return textOf(refused);
  } finally {
    await server.close();
  }
}

describe('the daily cap names when the next local day really begins', () => {
  it('Samoa, 2011-12-29: the next day is 2011-12-31 (the 30th was skipped)', async () => {
    expect(await secondSendOfTheDay('2011-12-29T22:00:00Z', 'Pacific/Apia')).toMatch(/The count resets at 2011-12-31 00:00 \(Pacific\/Apia\)\./);
  });

  it('Chile, 2026-09-05: the next day begins at 01:00 (daylight saving begins at midnight)', async () => {
    expect(await secondSendOfTheDay('2026-09-05T20:00:00Z', 'America/Santiago')).toMatch(/The count resets at 2026-09-06 01:00 \(America\/Santiago\)\./);
  });
});

describe('the quiet hours name when they really end', () => {
  it('New York, the night the clocks go from 02:00 to 03:00: a window to 02:30 ends at 03:00', async () => {
    // 01:30 EST on 2026-03-08.
    expect(await quietRefusal('2026-03-08T06:30:00Z', 'America/New_York', '22:00-02:30')).toMatch(
      /it is 01:30 in America\/New_York.*Quiet hours end at 03:00 local time\./s,
    );
  });

  it('Lord Howe Island, the night the clocks go from 02:00 to 02:30: a window to 02:15 ends at 02:30', async () => {
    // 01:30 on 2026-10-04 (UTC+10:30).
    expect(await quietRefusal('2026-10-03T15:00:00Z', 'Australia/Lord_Howe', '22:00-02:15')).toMatch(/Quiet hours end at 02:30 local time\./);
  });
});
