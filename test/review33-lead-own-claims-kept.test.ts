// Review 33 (lead): each replica's own claims in Redis's epoch (how a replica finds Redis gone back
// to an older copy) went with its clock's entry, after 15 minutes without a script from it. A
// replica cut off from Redis that long (a network partition), still keeping marks of writes it
// sent in the last half hour, then found none of its own claims counted and took it for a Redis
// that went back: a new epoch, and every replica's writes refused for the quiet, for nothing lost.
// A replica's entries are now kept until its marks are (the half hour after their end) is past
// too; its lead counts for yeses only its 15 minutes, as before.
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const PREFIX = 'engage-own-kept:';
const { clients } = redisPerFile(3);

describe('a replica that ran no script for 16 minutes, its marks still kept', () => {
  it('is no loss when it comes back: nothing is refused', async () => {
    const [away, other] = [0, 1].map((index) => new RedisGuardStore(clients[index] as RedisClient, { stateSecret: STATE_SECRET, prefix: PREFIX }));
    const admin = clients[2]!;
    expect(await away!.claimWrite('sent-before-the-partition', 'owner-away', Date.now() - 60_000, Date.now())).toBeUndefined();
    await away!.settleWrite('sent-before-the-partition', 'owner-away', 'done');
    // Its last word, as Redis holds it, 16 minutes old (Redis's clock cannot be moved: the entry is).
    const [replica] = (await admin.command(['HKEYS', `${PREFIX}guard:claims`])) as string[];
    const [lead] = String(await admin.command(['HGET', `${PREFIX}guard:clock-leads`, replica!])).split(' ');
    const time = (await admin.command(['TIME'])) as string[];
    const redisNow = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    await admin.command(['HSET', `${PREFIX}guard:clock-leads`, replica!, `${lead} ${redisNow - 16 * 60_000}`]);
    expect(await other!.claimWrite('another-write', 'owner-other', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    // Back: its next script, then any replica's claim.
    await away!.lastSentWrite('a-read', Date.now());
    expect(await other!.claimWrite('a-third-write', 'owner-other', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    expect(await away!.claimWrite('a-fourth-write', 'owner-away', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
  });
});
