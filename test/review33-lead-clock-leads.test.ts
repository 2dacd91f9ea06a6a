// Review 33 (lead): a yes is dated by the clock of the replica that gave it and read, on the
// replica that uses it, by the most any replica's clock leads Redis's. Two ways that lead was not
// there when the yes was read, so a yes given on a replica five minutes fast read as given five
// minutes later, after a send of the same write that came after it, and the write went out twice:
// - the replica's clock was set right (NTP) after it gave the yes: its lead was overwritten by the
//   new one at its next script, though its yeses dated by the old one still lived;
// - the replica had run no mark script yet (just started: a preview, then the yes) or none for the
//   15 minutes a lead is kept: it had told Redis nothing.
// A replica whose lead falls (its clock set back) now keeps its former lead in Redis 15 minutes
// more, and each replica tells Redis its lead at start and every third of the quiet while it runs.
// Its own renewals and reports of its lead go by the clock it dates yeses and attempts by (the
// journal's forward clock, which a clock set back leaves ahead of the system's): by the system
// clock, they told Redis a lead lower than its yeses', kept 15 minutes only.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const FIVE_MINUTES = 5 * 60_000;
const { clients } = redisPerFile(3);
let writeNumber = 0;
const freshWrite = () => `clock-lead-write-${++writeNumber}`;

afterEach(() => {
  vi.restoreAllMocks();
});

/** Three replicas' stores on their own prefix: `fast` (whose clock a test sets), `sender` and `user`. */
function replicas(prefix: string) {
  const [fast, sender, user] = [0, 1, 2].map((index) => new RedisGuardStore(clients[index] as RedisClient, { stateSecret: STATE_SECRET, prefix }));
  return { fast: fast!, sender: sender!, user: user! };
}

/** The same write sent on `sender` after the yes (its yes, older, of its own), and ended. */
async function sentAfterTheYes(sender: RedisGuardStore, write: string) {
  expect(await sender.claimWrite(write, 'owner-sender', Date.now() - 60_000, Date.now())).toBeUndefined();
  await sender.settleWrite(write, 'owner-sender', 'done');
}

describe("a yes given on a replica whose clock is ahead of Redis's", () => {
  it('still refuses a send after it once that clock is set right', async () => {
    const { fast, sender, user } = replicas('engage-lead-1:');
    const write = freshWrite();
    await fast.lastSentWrite(freshWrite(), Date.now() + FIVE_MINUTES);
    const yes = Date.now() + FIVE_MINUTES; // given on the fast replica, by its clock
    await fast.lastSentWrite(freshWrite(), Date.now()); // NTP set it right
    await sentAfterTheYes(sender, write);
    expect(await user.claimWrite(write, 'owner-user', yes, Date.now())).toMatchObject({ outcome: 'done' });
  });

  it('refuses a send after it when that replica had only started (no mark script yet)', async () => {
    const { fast, sender, user } = replicas('engage-lead-2:');
    const write = freshWrite();
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + FIVE_MINUTES);
    await fast.startupCheck();
    const yes = Date.now();
    vi.restoreAllMocks();
    await sentAfterTheYes(sender, write);
    expect(await user.claimWrite(write, 'owner-user', yes, Date.now())).toMatchObject({ outcome: 'done' });
  });

  it("a write sent before the yes is sent on it, the fast replica's lead reported", async () => {
    const { fast, sender, user } = replicas('engage-lead-3:');
    const write = freshWrite();
    await sentAfterTheYes(sender, write);
    await fast.lastSentWrite(freshWrite(), Date.now() + FIVE_MINUTES);
    // Well after the send, on every clock, with the fast replica's lead taken off.
    const yes = Date.now() + FIVE_MINUTES + 10_000;
    expect(await user.claimWrite(write, 'owner-user', yes, Date.now())).toBeUndefined();
  });

  it("a replica's renewals and reports tell the lead of the clock its yeses are dated by", async () => {
    const prefix = 'engage-lead-4:';
    const { fast } = replicas(prefix);
    const write = freshWrite();
    // Its journal's clock five minutes ahead of its system clock (set back since): its yeses are dated by the former.
    expect(await fast.claimWrite(write, 'owner-fast', Number.MAX_SAFE_INTEGER, Date.now() + FIVE_MINUTES)).toBeUndefined();
    expect(await fast.renewWrite(write, 'owner-fast', Date.now())).toBe(true); // the renewal's own clock: the system's
    await fast.startupCheck();
    const said = (await clients[2]!.command(['HGETALL', `${prefix}guard:clock-leads`])) as string[];
    const leads = said.filter((_, index) => index % 2 === 0).map((field, index) => ({ field, lead: Number(String(said[index * 2 + 1]).split(' ')[0]) }));
    expect(leads.filter(({ field }) => !field.endsWith('~')).map(({ lead }) => lead)).toEqual([expect.any(Number)]);
    for (const { lead } of leads) expect(lead).toBeGreaterThan(FIVE_MINUTES - 2_000);
  });
});
