// The guardrails' state for remote mode's replicas, in the service's Redis: send counters (checked
// and added in one Lua step), idempotency records (reserved with SET NX, kept until they expire)
// and a capped audit record per key fingerprint, chained by the same HMAC as the file store's, so
// `engage-mcp-audit verify --remote` checks an export of it. Every Redis key names the key's
// fingerprint, never the key. A Redis that is down or stalls fails closed: the write that needed
// the store is refused (an InputError: nothing was sent, ask again later), never let past a cap;
// an idempotency key it may have reserved all the same is taken back once Redis answers again.
import { createHash, randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import {
  chainAuditLine,
  ClaimsPaused,
  ForwardClock,
  InputError,
  NO_YES,
  orphanedLine,
  remoteAuditSecret,
  SettleOwed,
  WRITE_MARK_LEASE_MS,
  type Attempt,
  type AuditEntry,
  type AuditHead,
  type GuardStore,
  type IdempotencyRecord,
  type PendingAudit,
} from '@engage-mcp/shared';
import { KeptMarks } from './redis-kept-marks.js';
import { Owed, RedisReplyError, type RedisClient } from './redis.js';

export const GUARD_STORE_UNAVAILABLE =
  "The guardrails' shared store (the service's Redis) did not answer, so this write's send caps and idempotency key, and whether the same write is already on its way on any replica, could not be checked: " +
  'nothing was sent. Ask again in a minute; if it persists, the service operator must check its Redis (ENGAGE_REDIS_URL).';

/** How many audit lines each key keeps by default; older lines are dropped first. */
export const AUDIT_MAX_LINES = 10_000;
/** Appends that lost a race for the chain's head to another replica are tried again, this many times in all. */
const AUDIT_TRIES = 50;
/** How long an orphan's line taken from its mark waits for a replica's append (each append that fails leaves it). */
const ORPHAN_OWED_MS = 24 * 60 * 60 * 1000;

interface Script {
  source: string;
  sha: string;
}
const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') });

/**
 * KEYS[1] the counter. ARGV: amount, cap, its lifetime from now (ms). Adds amount unless the count
 * would pass the cap; returns {1, count after} or {0, count now}. A value that is not a count fails (closed).
 */
export const TAKE = script(`
local count = 0
local held = redis.call('GET', KEYS[1])
if held then
  count = tonumber(held)
  if count == nil then return redis.error_reply('ENGAGE not a counter') end
end
local amount = tonumber(ARGV[1])
if count + amount > tonumber(ARGV[2]) then return {0, count} end
count = redis.call('INCRBY', KEYS[1], amount)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, count}
`);

/**
 * KEYS[1] the counter. ARGV: amount. Takes it back, never below 0; a counter that expired stays gone
 * (no key without expiry), and one given back to 0 goes (a made-up key's refused send leaves nothing).
 */
export const GIVE_BACK = script(`
local held = redis.call('GET', KEYS[1])
if not held then return 0 end
local count = tonumber(held)
if count == nil then return redis.error_reply('ENGAGE not a counter') end
local left = math.max(0, count - tonumber(ARGV[1]))
if left == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('DECRBY', KEYS[1], count - left)
end
return left
`);

/**
 * KEYS[1] the record (a hash: record, reply, owner). ARGV: the record's JSON, its lifetime from now
 * (ms), the reserving call's id. Returns nil once reserved, else the holder {record, reply}.
 */
export const RESERVE = script(`
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HMGET', KEYS[1], 'record', 'reply') end
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'owner', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return nil
`);

/**
 * KEYS[1] the record. ARGV: the ids of calls that reserved it. Takes back the reservation if one of
 * them holds it and it has no answer yet (another call's, or an answered one, stays); 1 if it did.
 */
export const UNRESERVE = script(`
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner or redis.call('HEXISTS', KEYS[1], 'reply') == 1 then return 0 end
for index = 1, #ARGV do
  if owner == ARGV[index] then
    redis.call('DEL', KEYS[1])
    return 1
  end
end
return 0
`);

/** How often a running replica reads its Redis's eviction policy again (a CONFIG SET, a failover to a Redis configured otherwise). */
export const EVICTION_CHECK_MS = 5_000;

/**
 * What is wrong with a Redis that evicts keys when it is full, for the operator; undefined when it
 * does not (no memory limit, or noeviction: a full Redis then refuses writes, which fails closed).
 * Every key the service writes has a lifetime, so volatile-* policies evict them as allkeys-* do.
 */
export function evictionProblem(info: string): string | undefined {
  const field = (name: string) => new RegExp(`^${name}:(\\S*)`, 'm').exec(info)?.[1];
  const limit = Number(field('maxmemory') ?? '0');
  const policy = field('maxmemory_policy') ?? 'noeviction';
  if (!(limit > 0) || policy === 'noeviction') return undefined;
  return (
    `the service's Redis (ENGAGE_REDIS_URL) evicts keys when it is full (maxmemory ${limit} bytes, maxmemory-policy ${policy}): ` +
    "an evicted write's mark, idempotency record or spent confirmation would let the same write be sent twice, with nothing said. " +
    'The operator must set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction, and in its configuration) or maxmemory 0; ' +
    'a full Redis then refuses writes, and the service says so'
  );
}

/** Reservations not settled yet kept at most: beyond, the oldest is given back by a plain DEL, as before owners. */
const MAX_RESERVATIONS = 10_000;
/** What claims replaced, kept for claimedOver (asked at once after each): more are never waiting unless one was not asked. */
const REPLACED_KEPT = 512;

/**
 * KEYS[1] the record. ARGV: the reply's JSON, and the reserving call's id (if known). Only a record
 * still held, by that call, gets it (its expiry unchanged): one Redis lost and another call reserved
 * since is that call's, still on its way or given back.
 */
export const SETTLE = script(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] and redis.call('HGET', KEYS[1], 'owner') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'reply', ARGV[1])
return 1
`);

/**
 * Lua: appends `line` (chained after seq `after`, becoming `seq` with `mac`) to the audit list if its
 * head is still at `after`, keeping the newest `most` lines; else changes nothing and returns the
 * head {seq, mac}, to chain again.
 */
const APPEND_CHAINED = `
local function appendChained(list, headKey, after, line, seq, mac, most)
  local head = redis.call('HMGET', headKey, 'seq', 'mac')
  local at = tonumber(head[1]) or 0
  if at ~= tonumber(after) then return {at, head[2] or ''} end
  redis.call('RPUSH', list, line)
  redis.call('HSET', headKey, 'seq', seq, 'mac', mac)
  local excess = redis.call('LLEN', list) - tonumber(most)
  if excess > 0 then redis.call('LTRIM', list, excess, -1) end
  return nil
end`;

/**
 * KEYS[1] the audit list, KEYS[2] its head (a hash: seq, mac). ARGV: the seq the line follows,
 * the line, its seq and mac, the most lines kept. Appends only if the head is still where the line
 * was chained from; else returns the head, to chain again. {1} when appended, {0, seq, mac} else.
 */
export const APPEND_AUDIT = script(`${APPEND_CHAINED}
local moved = appendChained(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
if moved then return {2, moved[1], moved[2]} end
return {1}
`);

/**
 * KEYS[1] the orphans' lines owed (a hash: a field per lapsed mark, its kept line), KEYS[2] and
 * KEYS[3] as APPEND_AUDIT's. ARGV[1] the line's field, then APPEND_AUDIT's five. The owed line
 * appended and taken off in one step: {1} (also when another replica appended it first), {2, seq,
 * mac} the head moved (nothing done: chain again).
 */
export const APPEND_OWED_ORPHAN = script(`${APPEND_CHAINED}
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {1} end
local moved = appendChained(KEYS[2], KEYS[3], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
if moved then return {2, moved[1], moved[2]} end
redis.call('HDEL', KEYS[1], ARGV[1])
return {1}
`);

/**
 * Lua: a lapsed mark's kept line moved to the lines owed (KEYS[owed]), by a field naming the mark and
 * its owner, kept `owedMs`: appended and taken off in one step later (APPEND_OWED_ORPHAN), so an
 * append that fails leaves it for the next. The field, or false when the mark kept none.
 */
const OWE_ORPHAN = `
local function oweOrphan(write, watch, owed, owedMs)
  local held = redis.call('HMGET', write, 'audit', 'owner', 'at')
  redis.call('HDEL', write, 'audit')
  redis.call('ZREM', watch, write)
  if not held[1] then return false end
  local field = write .. ' ' .. (held[2] or held[3] or '')
  redis.call('HSET', owed, field, held[1])
  redis.call('PEXPIRE', owed, owedMs)
  return field
end`;

export interface RedisGuardStoreOptions {
  /** ENGAGE_STATE_SECRET's bytes, the same on every replica: the audit secret is derived from it, never kept in Redis. */
  stateSecret: Uint8Array;
  prefix?: string;
  /** Audit lines kept per key fingerprint (default AUDIT_MAX_LINES). */
  auditMaxLines?: number;
  /**
   * Writes' marks stamped and judged by the times their callers pass (tests that set the time by
   * hand), as one clock. Default: Redis TIME, one clock for every replica whatever theirs read.
   */
  callerClock?: boolean;
  /** How long claims are refused after Redis lost what it held (default LOSS_QUIET_MS). */
  lossQuietMs?: number;
}

/**
 * Where the lines of writes the API refused the key for (401) go when that key has no record of its
 * own: one record for all of them (capped like any key's). Any string passes as a key until the
 * API answers, so a record each would let anyone grow Redis by a list per made-up key, for ever.
 * No fingerprint holds `~` (base64url), so no key's record is this one.
 */
export const REFUSED_KEYS_AUDIT = '~refused-keys';

/** The Redis key of a key fingerprint's audit record; `{…}` keeps the list and its head in one cluster slot. */
export const auditListKey = (keyPrefix: string, prefix = 'engage:') => `${prefix}audit:{${keyPrefix}}`;

/** The owner a note taken by TAKE_UNREAD is put back under (as done and told: no mark in flight has it). */
const TOLD_HERE = 'told-here';

/** How long a write's last attempt is kept, as this process's journal keeps it. */
export const WRITE_MEMORY_MS = 30 * 60 * 1000;
/**
 * How far a yes's time may be off Redis's beyond what the replicas' clocks are known to be: a write
 * marked this close before a yes counts as sent since it (the person is asked again rather than the
 * write sent twice).
 */
export const WRITE_CLOCK_SKEW_MS = 5_000;
/** How long a replica's lead over Redis's clock is kept after it last said it: longer than any yes lives (a requestState's 10 minutes). */
export const CLOCK_LEAD_KEPT_MS = 15 * 60 * 1000;

/**
 * How long a replica's entries (its lead, its own claims) are kept after its last script: until its
 * marks are forgotten too (the half hour after they end), so a replica cut off from Redis that long
 * does not find its claims gone and take that for a loss. Its lead counts for CLOCK_LEAD_KEPT_MS only.
 */
const REPLICA_KEPT_MS = CLOCK_LEAD_KEPT_MS + WRITE_MEMORY_MS;
/** A replica's lead that falls by more than this (its clock set back) is kept as it was, for the yeses it dated. */
const CLOCK_SET_BACK_MS = 1_000;
/**
 * How often the replicas' clocks are read whole (by whichever mark script comes first), the most any
 * leads kept beside them (KEYS[5]) meanwhile: every replica that ever started is an entry for 45
 * minutes, and read by every script 500 of them cost Redis 0.3 ms a write. A lead that ended within
 * this still counts (the safe side: a yes asks again); one said since is added to the most at once.
 */
const CLOCK_SCAN_MS = 10_000;
/** How long claims are refused after Redis lost what it held, by default: longer than a replica takes to renew its marks (and so see the loss). */
export const LOSS_QUIET_MS = 75_000;

/** Marks put back at once after a loss: a replica keeps up to 10,000, as many as its Redis connection queues. */
const RESTORE_BATCH = 200;

/** The write a replica reads only to learn Redis's epoch (no write digest is this: digests are base64url). */
const EPOCH_PROBE = '~epoch';

export const STATE_LOST =
  "The guardrails' shared store (the service's Redis) lost what it held (it restarted empty, was emptied, or failed over to a copy that lagged behind), " +
  'so whether this write is already on its way, or was sent since its yes, on another replica cannot be known until the replicas have put back what they sent: ' +
  'nothing was sent. Ask again in a minute or two; the service operator should run that Redis with persistence.';

/**
 * The start of every mark script. KEYS[2] the replicas' clocks (a hash: each replica's id, its
 * lead over Redis's clock and when it said it), KEYS[3] Redis's epoch ("id madeAt quietUntil
 * claims": claims counts the marks made in it), KEYS[4] each replica's own claims in it (a hash:
 * replica id, "epoch claims"; it goes with the replica's clock entry, REPLICA_KEPT_MS after its
 * last script), KEYS[5] the most any replica leads as KEYS[2] was last read whole ("lead readAt":
 * read again CLOCK_SCAN_MS after, and then its entries past keeping dropped). ARGV[1] the caller's now (ms), ARGV[2] '' (or, for a store on the callers' clock,
 * that clock), ARGV[3] the replica's id, ARGV[4] the epoch it knows, the most claims it saw there
 * and, while it keeps marks, the most of its own ("id:claims:own"; '' if none yet), ARGV[5] the
 * quiet after a loss (ms). Sets `now`, Redis's own clock (TIME, ms): a mark is stamped, renewed
 * and judged by it, one clock for every replica; `ahead`, how far it is ahead of the caller's, by
 * which the caller's times (a yes; an attempt's time, given back) are read on it; `lead`, the most
 * any replica's clock has been ahead of Redis's within CLOCK_LEAD_KEPT_MS, this one's now included
 * (a replica's clock set back keeps its former lead, as "id~", CLOCK_LEAD_KEPT_MS longer: yeses
 * dated by it live; a yes is dated by the clock of the replica that gave it, which may be another:
 * read by the most any replica leads, it is never read later than it was given); `epoch`, `seq`
 * and `own`, its id, its claims and this replica's (a script answers stamp(), "epoch:seq:own",
 * first); and `quiet`, true while claims wait after a loss. An epoch gone, another than the one a
 * replica knew, or with fewer claims than it saw, all told or its own, is Redis having lost what it
 * held (or gone back to a copy that lagged; claims made on the copy since make up the count all
 * told, never a replica's own): claims wait from when it was found, so each replica's next
 * renewal, or its check while it keeps marks, sees it and puts back its marks.
 */
const REDIS_CLOCK = `
local now = tonumber(ARGV[2])
if now == nil then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local ahead = now - tonumber(ARGV[1])
local lead = -ahead
local before = tonumber(string.match(redis.call('HGET', KEYS[2], ARGV[3]) or '', '^(-?%d+) %d+$'))
if before and before - lead > ${CLOCK_SET_BACK_MS} then
  local past = ARGV[3] .. '~'
  local was, wasAt = string.match(redis.call('HGET', KEYS[2], past) or '', '^(-?%d+) (%d+)$')
  if not (wasAt and now - tonumber(wasAt) <= ${CLOCK_LEAD_KEPT_MS} and tonumber(was) >= before) then
    redis.call('HSET', KEYS[2], past, string.format('%d %d', before, now))
  end
end
redis.call('HSET', KEYS[2], ARGV[3], string.format('%d %d', -ahead, now))
redis.call('PEXPIRE', KEYS[2], ${REPLICA_KEPT_MS})
local most, readAt = string.match(redis.call('GET', KEYS[5]) or '', '^(-?%d+) (%d+)$')
if readAt and now >= tonumber(readAt) and now - tonumber(readAt) < ${CLOCK_SCAN_MS} then
  lead = math.max(lead, tonumber(most))
  if lead > tonumber(most) then redis.call('SET', KEYS[5], string.format('%d %s', lead, readAt), 'KEEPTTL') end
else
  local said = redis.call('HGETALL', KEYS[2])
  for index = 1, #said, 2 do
    local other, at = string.match(said[index + 1], '^(-?%d+) (%d+)$')
    if not at or now - tonumber(at) > ${REPLICA_KEPT_MS} then
      redis.call('HDEL', KEYS[2], said[index])
      redis.call('HDEL', KEYS[4], said[index])
    elseif now - tonumber(at) <= ${CLOCK_LEAD_KEPT_MS} and tonumber(other) > lead then
      lead = tonumber(other)
    end
  end
  redis.call('SET', KEYS[5], string.format('%d %d', lead, now), 'PX', ${REPLICA_KEPT_MS})
end
redis.call('PEXPIRE', KEYS[4], ${REPLICA_KEPT_MS})
local knownId, knownSeq, knownOwn = string.match(ARGV[4], '^([^:]+):(%d+):(%d*)$')
local quietMs = tonumber(ARGV[5])
local epoch, madeAt, quietUntil, seq
local held = redis.call('GET', KEYS[3])
if held then
  epoch, madeAt, quietUntil, seq = string.match(held, '^(%S+) (%d+) (%d+) (%d+)$')
  if not epoch then return redis.error_reply('ENGAGE not an epoch') end
  madeAt, quietUntil, seq = tonumber(madeAt), tonumber(quietUntil), tonumber(seq)
end
local own = 0
local ownEpoch, ownHeld = string.match(redis.call('HGET', KEYS[4], ARGV[3]) or '', '^(%S+) (%d+)$')
if held and ownEpoch == epoch then own = tonumber(ownHeld) end
local function keepEpoch()
  redis.call('SET', KEYS[3], string.format('%s %d %d %d', epoch, madeAt, quietUntil, seq))
end
local function stamp()
  return string.format('%s:%d:%d', epoch, seq, own)
end
local function countClaim()
  seq, own = seq + 1, own + 1
  keepEpoch()
  redis.call('HSET', KEYS[4], ARGV[3], string.format('%s %d', epoch, own))
  redis.call('PEXPIRE', KEYS[4], ${REPLICA_KEPT_MS})
end
local wentBack = held and knownId == epoch and (seq < tonumber(knownSeq) or (knownOwn ~= '' and own < tonumber(knownOwn)))
if not held or wentBack then
  epoch, madeAt, seq, quietUntil, own = ARGV[3] .. '-' .. now, now, 0, 0, 0
  redis.call('DEL', KEYS[4])
  if knownId then quietUntil = now + quietMs end
  keepEpoch()
elseif knownId and knownId ~= epoch and quietUntil < madeAt + quietMs then
  quietUntil = madeAt + quietMs
  keepEpoch()
end
local quiet = now < quietUntil
`;

/**
 * KEYS[1] a write's last attempt (a hash: at, outcome, its owner's id, when the owner last renewed
 * it, and the attempt before it; times by Redis's clock; `unread`, the time of a done attempt whose
 * answer nobody read), KEYS[2-5] and ARGV[1-5] as REDIS_CLOCK's;
 * then its yes's time less WRITE_CLOCK_SKEW_MS (ms, on the clock of the replica that gave it), the
 * lease (ms), WRITE_MEMORY_MS, the new owner's id, '1' for a write that needs no yes. {stamp,
 * 'held', outcome, at (on the caller's clock)} of the attempt that refuses this one (in flight, or
 * sent since the yes); {stamp, 'unread', at, at by Redis's clock} of a write needing no yes whose last attempt was done
 * and never read (its note taken: a second repeat sends); {stamp, 'quiet'} after a loss; else marks
 * it in flight for the owner, keeping the attempt before for a refusal to
 * restore: {stamp, 'marked', now}, and that attempt's outcome and time (on the caller's clock) if there was one. A mark in flight whose lease ran out is an unknown outcome.
 * `unread` holds its attempt's time, so one a replica of the version before left on a later
 * attempt (it neither writes nor clears the field) never applies to it. ARGV[11]: the write's audit
 * line but for its outcome (JSON; '' for none), kept with the mark (`audit`) and the mark watched in
 * KEYS[6] (scored by when it was last renewed) until it is settled; a lapsed mark's kept line is
 * moved to the lines owed, KEYS[7] (once: the field goes), and its field answered last, for this
 * replica to append as an orphan's.
 */
export const CLAIM_WRITE = script(`${REDIS_CLOCK}${OWE_ORPHAN}
if quiet then return {stamp(), 'quiet'} end
local held = redis.call('HMGET', KEYS[1], 'at', 'outcome', 'alive', 'unread')
local at, outcome = tonumber(held[1]), held[2]
if not at then outcome = false end
if outcome == 'in-flight' and now - (tonumber(held[3]) or at) >= tonumber(ARGV[7]) then outcome = 'unknown' end
local orphan = false
if held[2] == 'in-flight' and outcome == 'unknown' then orphan = oweOrphan(KEYS[1], KEYS[6], KEYS[7], ${ORPHAN_OWED_MS}) end
if outcome and (outcome == 'in-flight' or at >= tonumber(ARGV[6]) - lead) then return {stamp(), 'held', outcome, at - ahead, orphan} end
if ARGV[10] == '1' and outcome == 'done' and tonumber(held[4]) == at then
  redis.call('HDEL', KEYS[1], 'unread')
  return {stamp(), 'unread', at - ahead, at}
end
if outcome then
  redis.call('HSET', KEYS[1], 'beforeAt', at, 'beforeOutcome', outcome)
else
  redis.call('HDEL', KEYS[1], 'beforeAt', 'beforeOutcome')
end
redis.call('HSET', KEYS[1], 'at', now, 'outcome', 'in-flight', 'owner', ARGV[9], 'alive', now)
if ARGV[11] and ARGV[11] ~= '' then
  redis.call('HSET', KEYS[1], 'audit', ARGV[11])
  redis.call('ZADD', KEYS[6], now, KEYS[1])
  redis.call('PEXPIRE', KEYS[6], ARGV[8])
else
  redis.call('HDEL', KEYS[1], 'audit')
end
redis.call('PEXPIRE', KEYS[1], ARGV[8])
countClaim()
if outcome then return {stamp(), 'marked', now, outcome, at - ahead, orphan} end
return {stamp(), 'marked', now}
`);

/** KEYS and ARGV[1-5] as CLAIM_WRITE's; then the lease (ms). {stamp, outcome, at (on the caller's clock)}, or {stamp}. */
export const LAST_WRITE = script(`${REDIS_CLOCK}
local held = redis.call('HMGET', KEYS[1], 'at', 'outcome', 'alive')
local at, outcome = tonumber(held[1]), held[2]
if not at or not outcome then return {stamp()} end
if outcome == 'in-flight' and now - (tonumber(held[3]) or at) >= tonumber(ARGV[6]) then outcome = 'unknown' end
return {stamp(), outcome, at - ahead}
`);

/** KEYS and ARGV[1-5] as CLAIM_WRITE's; then the owner's id, WRITE_MEMORY_MS. Renews the owner's mark in flight: {stamp, 1}, or {stamp, 0}. */
export const RENEW_WRITE = script(`${REDIS_CLOCK}
local held = redis.call('HMGET', KEYS[1], 'outcome', 'owner')
if held[1] ~= 'in-flight' or held[2] ~= ARGV[6] then return {stamp(), 0} end
redis.call('HSET', KEYS[1], 'alive', now)
if redis.call('HEXISTS', KEYS[1], 'audit') == 1 then
  redis.call('ZADD', KEYS[6], now, KEYS[1])
  redis.call('PEXPIRE', KEYS[6], ARGV[7])
end
redis.call('PEXPIRE', KEYS[1], ARGV[7])
return {stamp(), 1}
`);

/**
 * KEYS and ARGV[1-5] as CLAIM_WRITE's; then the mark's time (Redis's clock, ms), its outcome, its
 * owner, WRITE_MEMORY_MS, '1' when its answer was never read (the note put back too), 'told' when a
 * claim of this replica took its note (a note put back for the same attempt is dropped), and for a
 * mark in flight the audit line its claim kept (CLAIM_WRITE's ARGV[11]; '' for none), watched again
 * in KEYS[6]. Puts back a
 * mark Redis lost or holds an older state of (a copy that
 * lagged), unless the write holds a later attempt, or another's at the same time: {stamp, 1} if it
 * did, counted as a claim (so a Redis that goes back again, to before it was put back, is seen).
 */
export const RESTORE_WRITE = script(`${REDIS_CLOCK}
local at, memory = tonumber(ARGV[6]), tonumber(ARGV[9])
local was = redis.call('HMGET', KEYS[1], 'at', 'owner')
local wasAt = tonumber(was[1])
if ARGV[10] == 'told' and wasAt == at then redis.call('HDEL', KEYS[1], 'unread') end
if wasAt and (wasAt > at or (wasAt == at and was[2] ~= ARGV[8])) then return {stamp(), 0} end
redis.call('DEL', KEYS[1])
if ARGV[7] == 'in-flight' then
  redis.call('HSET', KEYS[1], 'at', at, 'outcome', ARGV[7], 'owner', ARGV[8], 'alive', now)
  if ARGV[11] and ARGV[11] ~= '' then
    redis.call('HSET', KEYS[1], 'audit', ARGV[11])
    redis.call('ZADD', KEYS[6], now, KEYS[1])
    redis.call('PEXPIRE', KEYS[6], memory)
  end
  redis.call('PEXPIRE', KEYS[1], memory)
  countClaim()
  return {stamp(), 1}
end
if at + memory <= now then return {stamp(), 0} end
redis.call('HSET', KEYS[1], 'at', at, 'outcome', ARGV[7])
if ARGV[10] == '1' and ARGV[7] == 'done' then redis.call('HSET', KEYS[1], 'unread', ARGV[6]) end
redis.call('PEXPIRE', KEYS[1], string.format('%d', at + memory - now))
countClaim()
return {stamp(), 1}
`);

/** Lua: a mark settled as done or unknown (an unread done one noted with its attempt's time `at`), kept `memory` ms. */
const SETTLE_WENT_OUT = `
local function settleWentOut(write, outcome, at, memory, unread)
  redis.call('HSET', write, 'outcome', outcome)
  if unread == '1' and outcome == 'done' then redis.call('HSET', write, 'unread', at) end
  redis.call('HDEL', write, 'beforeAt', 'beforeOutcome', 'owner', 'alive', 'audit')
  redis.call('PEXPIRE', write, memory)
end`;

/**
 * KEYS[1] as CLAIM_WRITE's. ARGV: the owner's id, outcome (done, unknown, refused), WRITE_MEMORY_MS,
 * '1' when its answer was never read (noted as `unread`, its attempt's time, for CLAIM_WRITE).
 * Settles the owner's mark only; a refused attempt gives the place back to the one before it (an
 * unread note of that one, left alone, applies to it again). Its kept audit line goes, and the mark
 * leaves KEYS[2] (CLAIM_WRITE's KEYS[6]): its own line follows.
 */
export const SETTLE_WRITE = script(`${SETTLE_WENT_OUT}
local held = redis.call('HMGET', KEYS[1], 'outcome', 'owner', 'beforeAt', 'beforeOutcome', 'at')
if held[1] ~= 'in-flight' or held[2] ~= ARGV[1] then return 0 end
if KEYS[2] then redis.call('ZREM', KEYS[2], KEYS[1]) end
if ARGV[2] == 'refused' then
  if held[3] and held[4] then
    redis.call('HSET', KEYS[1], 'at', held[3], 'outcome', held[4])
    redis.call('HDEL', KEYS[1], 'beforeAt', 'beforeOutcome', 'owner', 'alive', 'audit')
  else
    redis.call('DEL', KEYS[1])
  end
  return 1
end
settleWentOut(KEYS[1], ARGV[2], held[5], ARGV[3], ARGV[4])
return 1
`);

/**
 * SETTLE_WRITE for a write that went out (done, unknown) with its audit line appended in the same
 * step, so a replica stopped between the two cannot leave the write settled with no line (the
 * settle drops the kept line an orphan's would come from). KEYS[1], KEYS[2] as SETTLE_WRITE's,
 * KEYS[3] the audit list, KEYS[4] its head. ARGV[1..4] as SETTLE_WRITE's, then APPEND_AUDIT's five.
 * {1} settled and appended (also when this owner's settle was applied before: a retry whose answer
 * was lost appends nothing twice), {0} not this owner's mark in flight (nothing done: the caller
 * appends the line itself), {2, seq, mac} the head moved (nothing done: chain again).
 */
export const SETTLE_AND_APPEND = script(`${SETTLE_WENT_OUT}${APPEND_CHAINED}
local held = redis.call('HMGET', KEYS[1], 'outcome', 'owner', 'at', 'settledBy')
if held[4] == ARGV[1] then return {1} end
if held[1] ~= 'in-flight' or held[2] ~= ARGV[1] then return {0} end
local moved = appendChained(KEYS[3], KEYS[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
if moved then return {2, moved[1], moved[2]} end
redis.call('ZREM', KEYS[2], KEYS[1])
settleWentOut(KEYS[1], ARGV[2], held[3], ARGV[3], ARGV[4])
redis.call('HSET', KEYS[1], 'settledBy', ARGV[1])
return {1}
`);

/**
 * KEYS[1] as CLAIM_WRITE's. Takes the unread note of its done attempt (the replica that kept its
 * answer gives it, or an idempotency key's first answer told of it): the attempt's time (Redis's
 * clock, ms), or 0 if none.
 */
export const TAKE_UNREAD = script(`
local held = redis.call('HMGET', KEYS[1], 'at', 'outcome', 'unread')
if held[2] ~= 'done' or not held[3] or tonumber(held[3]) ~= tonumber(held[1]) then return 0 end
redis.call('HDEL', KEYS[1], 'unread')
return tonumber(held[1])
`);

/**
 * KEYS[1] a write's last attempt, KEYS[2] the marks watched (CLAIM_WRITE's KEYS[6]), KEYS[3] the
 * lines owed (its KEYS[7]). ARGV: the caller's clock ('' for Redis's), the lease (ms). The audit
 * line a mark whose lease ran out kept, moved to the lines owed (once: the field goes): its field;
 * 1 for one renewed since (watched on, by when it was), 0 for one settled or gone.
 */
export const TAKE_ORPHAN = script(`${OWE_ORPHAN}
local now = tonumber(ARGV[1])
if now == nil then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local held = redis.call('HMGET', KEYS[1], 'outcome', 'alive', 'at', 'audit')
if held[1] ~= 'in-flight' or not held[4] then
  redis.call('ZREM', KEYS[2], KEYS[1])
  return 0
end
local alive = tonumber(held[2]) or tonumber(held[3]) or 0
if now - alive < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[2], alive, KEYS[1])
  return 1
end
return oweOrphan(KEYS[1], KEYS[2], KEYS[3], ${ORPHAN_OWED_MS}) or 0
`);

/**
 * KEYS[1] a key no one writes (so each command finds nothing, and a damaged key of the service's
 * is not taken for a refusal). ARGV[1] a member. The commands of the orphan watch, the lines owed
 * and the audit record that the mark script run at the start does not use, each as changes
 * nothing: an ACL user without @sortedset passed that script, then failed every write that keeps
 * its audit line. 1.
 */
export const PROBE_AUDIT_COMMANDS = script(`
redis.call('ZADD', KEYS[1], 'XX', 0, ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZRANGE', KEYS[1], 0, 0)
redis.call('HEXISTS', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('LLEN', KEYS[1])
redis.call('LTRIM', KEYS[1], 0, -1)
redis.call('HSCAN', KEYS[1], 0, 'COUNT', 1)
return 1
`);

/** The most watched marks one look for orphans takes (the longest unrenewed first); the rest wait for the next look. */
const ORPHANS_PER_LOOK = 256;
/** How often a replica looks for orphaned marks (its first claim looks first). */
const ORPHAN_LOOK_EVERY_MS = 10 * 60 * 1000;

/** A reservation of this store's: the reserving call's id, and when the record expires. */
interface Reservation {
  owner: string;
  expiresAt: number;
}

export class RedisGuardStore implements GuardStore {
  private readonly secret: Buffer;
  private readonly prefix: string;
  private readonly auditMaxLines: number;
  private readonly callerClock: boolean;
  /** Why Redis cannot be trusted with this state (it evicts), as last read, and when (performance.now()). */
  private eviction: { problem?: string; readAt: number } | undefined;
  /** The marks this replica made, to put back when Redis loses them; and Redis's epoch as this replica knows it ('' before its first mark script). */
  private readonly kept = new KeptMarks(WRITE_MEMORY_MS);
  private epoch = '';
  /** The highest count of claims this replica has seen in its epoch: a Redis that shows fewer went back (a failover to a copy that lagged). */
  private seq = 0;
  /** The most of this replica's own claims Redis has counted in its epoch: claims on a copy that lagged make up `seq`, never this. */
  private own = 0;
  private watching: NodeJS.Timeout | undefined;
  private reporting: NodeJS.Timeout | undefined;
  /** close() was called: no timer starts again. */
  private closed = false;
  /** The epoch this replica is learning (its marks being put back), which every script that finds it waits for. */
  private learning: { epoch: string; done: Promise<void> } | undefined;
  /** The clock this replica dates its yeses and attempts by, as the journal's (ForwardClock: a lead is caught up at half rate). */
  private readonly forward = new ForwardClock();
  private readonly lossQuietMs: number;
  /** This replica, as the replicas' clocks in Redis name it. */
  private readonly replica = randomBytes(12).toString('base64url');
  /** What the claims of writes needing no yes replaced, by owner id, until claimedOver gives it. */
  private readonly replaced = new Map<string, Attempt>();
  /** Reservations made here and not settled yet, by key. */
  private readonly reserved = new Map<string, Reservation>();
  /** Idempotency keys this store may hold without knowing it (Owed), given back by owner. */
  private readonly unreserved = new Owed((key, owners) => this.run(UNRESERVE, [this.recordKey(key)], owners));
  /** Idempotency keys whose write's first answer Redis may not have taken, given it again (each item: settleArgs' JSON). */
  private readonly unsettled = new Owed((key, answers) => this.run(SETTLE, [this.recordKey(key)], JSON.parse(answers.at(-1) as string) as string[]));
  /**
   * Write marks this store may have left in flight without knowing it, settled by owner (each item
   * settleItem's JSON): a claim Redis may have applied late is 'refused' (nothing was sent), a
   * settling Redis did not take is done again with its outcome: one kept with its line first, one at
   * a time (a settle without it, made first, would drop the line kept with the mark meanwhile).
   */
  private readonly unclaimed = new Owed(async (write, items) => {
    const withLine = (item: string) => (JSON.parse(item) as unknown[]).length > 3;
    for (const item of [...items.filter(withLine), ...items.filter((item) => !withLine(item))]) await this.settleAgain(write, item);
  });

  constructor(
    private readonly redis: RedisClient,
    options: RedisGuardStoreOptions,
  ) {
    this.secret = remoteAuditSecret(options.stateSecret);
    this.prefix = options.prefix ?? 'engage:';
    this.auditMaxLines = options.auditMaxLines ?? AUDIT_MAX_LINES;
    this.callerClock = options.callerClock ?? false;
    this.lossQuietMs = options.lossQuietMs ?? LOSS_QUIET_MS;
  }

  /**
   * Refuses every write (nothing sent) while the Redis it runs on evicts keys when full: read at
   * most every EVICTION_CHECK_MS, a failed reading too. A Redis that does not answer, or does not
   * let INFO be read, leaves the last reading: each step of the write fails closed on its own if Redis is down.
   */
  async ready() {
    const last = this.eviction;
    if (!last || performance.now() - last.readAt >= EVICTION_CHECK_MS) {
      const info = await this.redis.command(['INFO', 'memory']).catch(() => undefined);
      // A reading that failed (INFO refused to this user, Redis down) waits its turn too, the last one holding.
      const problem = typeof info === 'string' ? evictionProblem(info) : last?.problem;
      this.eviction = { ...(problem ? { problem } : {}), readAt: performance.now() };
    }
    if (this.eviction?.problem) throw new InputError(`${this.eviction.problem}. Nothing was sent.`);
  }

  /**
   * For the service's start: why it must not start on this Redis (it evicts), and warnings: the
   * eviction policy could not be read (INFO not allowed to this user), or this replica's clock is
   * off Redis's by more than a second (a yes given here is read by the most any replica leads).
   */
  async startupCheck(): Promise<{ refuse?: string; warnings: string[] }> {
    const warnings = [await this.clockWarning()].filter((warning): warning is string => warning !== undefined);
    let info: unknown;
    try {
      info = await this.redis.command(['INFO', 'memory']);
    } catch (error) {
      const why = error instanceof Error ? error.message.split(' ')[0] : 'no answer';
      warnings.push(`could not read the Redis's eviction policy (INFO memory: ${why}); make sure it is maxmemory-policy noeviction (or maxmemory 0)`);
    }
    const problem = typeof info === 'string' ? evictionProblem(info) : undefined;
    if (problem) this.eviction = { problem, readAt: performance.now() };
    // Refused before this replica tells Redis anything: one refused in a crash loop leaves no entry.
    if (problem) return { refuse: problem, warnings };
    const refused = scriptRefusal(await this.reportLead()) ?? scriptRefusal(await this.probeAuditCommands());
    if (refused?.transient) warnings.push(refused.message);
    return refused && !refused.transient ? { refuse: refused.message, warnings } : { warnings };
  }

  /**
   * Tells Redis this replica's clock's lead now and every third of the quiet after a loss (so within
   * it after Redis lost the leads too), reading its epoch as watchEpoch does: a yes given here is
   * read on another replica by the leads Redis holds, and a replica that had marked no write yet,
   * or none for CLOCK_LEAD_KEPT_MS, had told it nothing. What the first report failed with, if it did.
   */
  private async reportLead(): Promise<unknown> {
    const report = () => {
      this.kept.kept(); // drops marks past their keeping: a replica keeping none does not check its own claims
      return this.mark(LAST_WRITE, EPOCH_PROBE, this.forwardNow(), [WRITE_MARK_LEASE_MS]).then(
        () => undefined,
        (error: unknown) => error,
      );
    };
    if (!this.closed) this.reporting ??= setInterval(report, Math.max(1, Math.floor(this.lossQuietMs / 3)));
    this.reporting?.unref();
    return report();
  }

  /** PROBE_AUDIT_COMMANDS run: what it failed with, if it did. */
  private async probeAuditCommands(): Promise<unknown> {
    return this.run(PROBE_AUDIT_COMMANDS, [`${this.prefix}guard:~probe`], [EPOCH_PROBE]).then(
      () => undefined,
      (error: unknown) => error,
    );
  }

  /** Stops the report and the epoch watch (the service closed, its writes ended): no script runs on Redis after. */
  close(): void {
    this.closed = true;
    clearInterval(this.reporting);
    clearInterval(this.watching);
    [this.reporting, this.watching] = [undefined, undefined];
    for (const owed of [this.unclaimed, this.unsettled, this.unreserved]) owed.stop();
  }

  /** This replica's clock against Redis's (TIME), when they are more than a second apart. */
  private async clockWarning(): Promise<string | undefined> {
    const asked = Date.now();
    const time = await this.redis.command(['TIME']).catch(() => undefined);
    if (!Array.isArray(time)) return undefined;
    const redisNow = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    const lead = Math.round((asked + Date.now()) / 2 - redisNow);
    if (!(Math.abs(lead) > 1_000)) return undefined;
    const how = `${Math.round(Math.abs(lead) / 1000)} s ${lead > 0 ? 'ahead of' : 'behind'}`;
    return (
      `this replica's clock is ${how} Redis's: writes' marks go by Redis's clock, but a yes is dated by the clock of the replica that gave it, ` +
      'and every replica reads yeses by the most any replica is ahead, so a yes asks again for the same write sent within that time before it. Synchronise the clocks (NTP)'
    );
  }

  async take(counter: string, amount: number, cap: number, expiresAt: number) {
    const reply = await this.run(TAKE, [this.counterKey(counter)], [amount, cap, lifetime(expiresAt)]);
    if (!Array.isArray(reply) || typeof reply[1] !== 'number') throw unavailable();
    return { taken: reply[0] === 1, count: reply[1] };
  }

  async giveBack(counter: string, amount: number) {
    await this.run(GIVE_BACK, [this.counterKey(counter)], [amount]);
  }

  async count(counter: string) {
    const held = await this.command(['GET', this.counterKey(counter)]);
    const count = held === null ? 0 : Number(held);
    if (!Number.isInteger(count)) throw unavailable();
    return count;
  }

  async lookup(key: string) {
    await this.unreserved.now(key);
    await this.unsettled.now(key);
    const held = await this.command(['HMGET', this.recordKey(key), 'record', 'reply']);
    return recordOf(held);
  }

  async reserve(key: string, record: IdempotencyRecord, expiresAt: number) {
    await this.unreserved.now(key);
    const mine = { owner: randomBytes(12).toString('base64url'), expiresAt: Math.ceil(expiresAt) };
    let held: unknown;
    try {
      held = await this.run(RESERVE, [this.recordKey(key)], [JSON.stringify(record), lifetime(mine.expiresAt), mine.owner]);
    } catch (error) {
      // The call is told nothing was sent; a reservation Redis applies late must not say "unknown" for 24 hours.
      this.unreserved.remember(key, mine.owner, mine.expiresAt);
      throw error;
    }
    if (held !== null) return recordOf(held);
    this.reserved.set(key, mine);
    if (this.reserved.size > MAX_RESERVATIONS) this.reserved.delete(this.reserved.keys().next().value as string);
    return undefined;
  }

  async settle(key: string, reply: CallToolResult | undefined) {
    const mine = this.reserved.get(key);
    this.reserved.delete(key);
    if (reply !== undefined) {
      // To its own reservation only (its owner's id, when this store still knows it).
      const settleArgs = mine ? [JSON.stringify(reply), mine.owner] : [JSON.stringify(reply)];
      try {
        await this.run(SETTLE, [this.recordKey(key)], settleArgs);
      } catch (error) {
        // The write was carried out (or may have been): its key must answer that, not "unknown", once Redis is back.
        this.unsettled.remember(key, JSON.stringify(settleArgs), mine?.expiresAt ?? Date.now() + 24 * 60 * 60 * 1000);
        throw error;
      }
      return;
    }
    if (!mine) return void (await this.command(['DEL', this.recordKey(key)]));
    try {
      await this.run(UNRESERVE, [this.recordKey(key)], [mine.owner]);
    } catch (error) {
      this.unreserved.remember(key, mine.owner, mine.expiresAt);
      throw error;
    }
  }

  /**
   * Chained to the head in Redis; a replica that lost the race to another's append chains again from
   * the new head. A key the API refused, without a record of its own, is written to REFUSED_KEYS_AUDIT's.
   */
  async appendAudit(entry: AuditEntry) {
    await this.chained(entry, (list, headKey, appendArgs) => this.run(APPEND_AUDIT, [list, headKey], appendArgs));
  }

  /**
   * `step` run with `line` chained after the audit head (its list, head key and APPEND_AUDIT's five
   * arguments), again from the new head each time another replica's line came first ({2, seq, mac}):
   * what it answered otherwise.
   */
  private async chained(line: AuditEntry, step: (list: string, headKey: string, appendArgs: Array<string | number>) => Promise<unknown>): Promise<unknown[]> {
    const { list, headKey } = await this.auditKeysFor(line);
    let head = await this.auditHead(headKey);
    for (let attempt = 0; attempt < AUDIT_TRIES; attempt++) {
      const chained = chainAuditLine(this.secret, head, line);
      const reply = await step(list, headKey, [head.seq, chained.line, chained.head.seq, chained.head.mac, this.auditMaxLines]);
      if (!Array.isArray(reply)) throw unavailable();
      if (reply[0] !== 2) return reply;
      head = { seq: Number(reply[1]), mac: String(reply[2] ?? '') };
    }
    throw new Error(`the audit record of key ${line.key} kept moving under ${AUDIT_TRIES} appends; this line was not written`);
  }

  /** The key's audit list, or REFUSED_KEYS_AUDIT's for a key the API refused that has no record of its own. */
  private async auditKeysFor(entry: AuditEntry): Promise<{ list: string; headKey: string }> {
    let list = auditListKey(entry.key, this.prefix);
    if (entry.apiStatus === 401 && (await this.command(['EXISTS', list])) === 0) list = auditListKey(REFUSED_KEYS_AUDIT, this.prefix);
    return { list, headKey: `${list}:head` };
  }

  private async auditHead(headKey: string): Promise<AuditHead> {
    const [seq, mac] = (await this.command(['HMGET', headKey, 'seq', 'mac'])) as [string | null, string | null];
    return { seq: Number(seq ?? 0), mac: mac ?? '' };
  }

  async auditSecret() {
    return this.secret;
  }

  /**
   * Stamped and judged by Redis's clock, so a replica whose clock is off neither takes a mark still
   * renewed for a lapsed one nor dates its send before a yes given earlier. `now` and `approvedAt`
   * are on this server's clock (the one it dates its attempts and yeses by); `clockNow`, the system
   * clock, is not needed: a lease is judged by Redis's. Refused (nothing sent) while Redis has just
   * lost what it held. `audit` is kept with the mark until it is settled; a lapsed mark's kept line
   * is appended here as an orphan's (so are those of marks never claimed again: lookForOrphans).
   */
  async claimWrite(write: string, id: string, approvedAt: number, now: number, _clockNow?: number, audit?: PendingAudit) {
    await this.unclaimed.now(write);
    await this.lookForOrphansIfDue();
    let reply: unknown[];
    const kept = audit ? JSON.stringify(audit) : '';
    try {
      const noYes = approvedAt === NO_YES ? '1' : '0';
      reply = await this.mark(CLAIM_WRITE, write, now, [approvedAt - WRITE_CLOCK_SKEW_MS, WRITE_MARK_LEASE_MS, WRITE_MEMORY_MS, id, noYes, kept]);
    } catch (error) {
      // Nothing is sent; a mark Redis applies late must not say "still being sent", then "unknown", for this write.
      this.unclaimed.remember(write, settleItem(id, 'refused'), now + WRITE_MEMORY_MS);
      throw error;
    }
    if (reply[0] === 'quiet') throw new ClaimsPaused(STATE_LOST);
    await this.appendOrphan(reply[0] === 'held' ? reply[3] : reply[0] === 'marked' ? reply[4] : undefined);
    if (reply[0] === 'held') return attemptOf(reply.slice(1));
    if (reply[0] === 'unread') {
      // Remembered as told, with the attempt's time on Redis's clock: a loss must not bring the note back from its settling replica.
      if (typeof reply[2] === 'number') this.kept.told(write, { at: reply[2], owner: id });
      return { ...attemptOf(['done', reply[1]]), unread: true };
    }
    if (reply[0] !== 'marked' || typeof reply[1] !== 'number') throw unavailable();
    this.kept.marked(write, id, reply[1], kept || undefined);
    this.watchEpoch();
    if (approvedAt === NO_YES) this.keepReplaced(id, reply.length > 2 ? attemptOf(reply.slice(2)) : undefined);
    return undefined;
  }

  /**
   * A lapsed mark's kept line, owed under `field` (CLAIM_WRITE or TAKE_ORPHAN moved it there),
   * appended as `unknown`, `orphaned` and taken off in one step, so no other replica appends it
   * too. A failure here must not fail the claim that found it: the line stays owed for the next look
   * (false then, so a look stops at once rather than wait for Redis once per line owed).
   */
  private async appendOrphan(field: unknown): Promise<boolean> {
    if (typeof field !== 'string' || field === '') return true;
    const owed = this.owedOrphansKey();
    try {
      const kept = await this.command(['HGET', owed, field]);
      const line = typeof kept === 'string' ? orphanLine(kept) : undefined;
      if (!line) await this.command(['HDEL', owed, field]);
      else await this.chained(line, (list, headKey, appendArgs) => this.run(APPEND_OWED_ORPHAN, [owed, list, headKey], [field, ...appendArgs]));
      return true;
    } catch (error) {
      // Owed still: the next look appends it. A line that fails for itself (the head kept moving) does not stop the look.
      return !(error instanceof InputError);
    }
  }

  private lookedAt: number | undefined;

  /**
   * The marks watched (those keeping an audit line), longest unrenewed first, ORPHANS_PER_LOOK at
   * most: each whose lease ran out gives its line (TAKE_ORPHAN). At a replica's first claim, then
   * every ORPHAN_LOOK_EVERY_MS: writes never claimed again get their lines too. Best effort.
   */
  private async lookForOrphansIfDue(): Promise<void> {
    const now = Date.now();
    if (this.lookedAt !== undefined && Math.abs(now - this.lookedAt) < ORPHAN_LOOK_EVERY_MS) return;
    this.lookedAt = now;
    try {
      // Lines owed since an append that failed, then the marks watched.
      const [, owed] = (await this.command(['HSCAN', this.owedOrphansKey(), 0, 'COUNT', ORPHANS_PER_LOOK])) as [unknown, unknown];
      const fields = (Array.isArray(owed) ? owed : []).filter((_, index) => index % 2 === 0);
      for (const field of fields) if (!(await this.appendOrphan(field))) return;
      const watched = await this.command(['ZRANGE', this.orphanWatchKey(), 0, ORPHANS_PER_LOOK - 1]);
      for (const key of Array.isArray(watched) ? watched : []) {
        const taken = await this.run(
          TAKE_ORPHAN,
          [String(key), this.orphanWatchKey(), this.owedOrphansKey()],
          [this.callerClock ? Date.now() : '', WRITE_MARK_LEASE_MS],
        );
        // Scored by their last renewal: the first still renewed means every one after it is too.
        if (taken === 1) break;
        if (!(await this.appendOrphan(taken))) return;
      }
    } catch {
      // Redis did not answer: the next look, or the write's next claim, finds them.
    }
  }

  /**
   * The attempt the owner's claim replaced, as the claim's own step saw it (a read before the claim can miss another
   * replica's that began and ended meanwhile, or take one that gave its place back for one that went out): given once.
   */
  async claimedOver(_write: string, id: string) {
    const replaced = this.replaced.get(id);
    this.replaced.delete(id);
    return replaced;
  }

  /** Kept for claimedOver, asked right after the claim; a few hundred at most, should a claim never be asked about. */
  private keepReplaced(id: string, attempt: Attempt | undefined): void {
    if (!attempt) return;
    if (this.replaced.size >= REPLACED_KEPT) this.replaced.delete(this.replaced.keys().next().value as string);
    this.replaced.set(id, attempt);
  }

  /**
   * Whether the mark is still the owner's in flight. A renewal that finds Redis lost its state puts
   * this replica's marks back (learnEpoch) and asks again: a mark Redis lost was not taken over.
   */
  async renewWrite(write: string, id: string, now: number) {
    const known = this.epoch;
    // Its answer holds no time: the lead it reports goes by the clock this replica dates its yeses by
    // (on the callers' clock, theirs).
    const at = () => (this.callerClock ? now : this.forwardNow(now));
    const renewed = await this.mark(RENEW_WRITE, write, at(), [id, WRITE_MEMORY_MS]);
    if (renewed[0] === 1 || this.epoch === known) return renewed[0] === 1;
    return (await this.mark(RENEW_WRITE, write, at(), [id, WRITE_MEMORY_MS]))[0] === 1;
  }

  /** Settled; `line` (its audit line) appended in the same step: true when it was, and the call appends none after. */
  async settleWrite(write: string, id: string, outcome: 'done' | 'unknown' | 'refused', unread = false, line?: AuditEntry) {
    this.kept.settled(write, id, outcome, unread);
    const noted = unread ? '1' : '0';
    const appending = line && outcome !== 'refused' ? line : undefined;
    try {
      // A settle of this write kept with its line (SettleOwed) is made first: this one, settled without it, would
      // otherwise drop the line kept with the mark while the kept settle's was in this replica's memory alone.
      await this.unclaimed.now(write);
      if (appending) return await this.settleAppending(write, [id, outcome, WRITE_MEMORY_MS, noted], appending);
      await this.run(SETTLE_WRITE, [this.writeKey(write), this.orphanWatchKey()], [id, outcome, WRITE_MEMORY_MS, noted]);
      return false;
    } catch (error) {
      // Left in flight, the mark would say "still being sent", then "unknown", on every replica: settled once Redis
      // answers, with its line (the settle drops the line kept with the mark, so none would be left).
      const kept = this.unclaimed.remember(write, settleItem(id, outcome, noted, appending), Date.now() + WRITE_MEMORY_MS);
      // Not kept (too many owed): the line is the call's to append, as before any settle was kept.
      if (appending && kept) throw new SettleOwed(error instanceof Error ? error.message : String(error));
      throw error;
    }
  }

  /** A settle Redis did not take, made again; one with its line appends it, with the settle or, the mark gone (Redis lost it), alone. */
  private async settleAgain(write: string, item: string): Promise<void> {
    const [owner, outcome, unread = '0', line] = JSON.parse(item) as [string, string, string?, AuditEntry?];
    const settleArgs = [owner, outcome, WRITE_MEMORY_MS, unread];
    if (!line) return void (await this.run(SETTLE_WRITE, [this.writeKey(write), this.orphanWatchKey()], settleArgs));
    if (!(await this.settleAppending(write, settleArgs, line))) await this.appendAudit(line);
  }

  /** SETTLE_AND_APPEND: true when the line was appended with the settle. */
  private async settleAppending(write: string, settleArgs: Array<string | number>, line: AuditEntry): Promise<boolean> {
    const reply = await this.chained(line, (list, headKey, appendArgs) =>
      this.run(SETTLE_AND_APPEND, [this.writeKey(write), this.orphanWatchKey(), list, headKey], [...settleArgs, ...appendArgs]),
    );
    return reply[0] === 1;
  }

  async takeUnread(write: string) {
    this.kept.told(write);
    const takenAt = await this.run(TAKE_UNREAD, [this.writeKey(write)], []);
    if (typeof takenAt !== 'number' || takenAt <= 0) return false;
    // Remembered as told even where another replica settled it: a loss must not bring the note back from there.
    this.kept.told(write, { at: takenAt, owner: TOLD_HERE });
    return true;
  }

  async lastSentWrite(write: string, now: number) {
    await this.unclaimed.now(write);
    const reply = await this.mark(LAST_WRITE, write, now, [WRITE_MARK_LEASE_MS]);
    return reply.length === 0 ? undefined : attemptOf(reply);
  }

  /**
   * While this replica keeps marks, Redis's epoch is read every third of the quiet, so a loss is
   * seen, and the marks put back, within the quiet even on a replica that is idle.
   */
  private watchEpoch(): void {
    if (this.watching || this.reporting || this.closed) return;
    this.watching = setInterval(
      () => {
        if (this.kept.kept().length > 0) return void this.mark(LAST_WRITE, EPOCH_PROBE, this.forwardNow(), [WRITE_MARK_LEASE_MS]).catch(() => undefined);
        clearInterval(this.watching);
        this.watching = undefined;
      },
      Math.max(1, Math.floor(this.lossQuietMs / 3)),
    );
    this.watching.unref();
  }

  /** A mark script run for `write`: what it answered after the epoch, which this replica learns (a new one: Redis lost its marks, put back). */
  private async mark(code: Script, write: string, now: number, args: Array<string | number>): Promise<unknown[]> {
    this.forwardNow(now);
    // Its own claims are checked only while it keeps marks: a replica's count goes REPLICA_KEPT_MS after its last script.
    const own = this.kept.size > 0 ? this.own : '';
    const known = this.epoch === '' ? '' : `${this.epoch}:${this.seq}:${own}`;
    const reply = await this.run(code, this.markKeys(write), [...this.clock(now), known, this.lossQuietMs, ...args]);
    const stamp = Array.isArray(reply) && typeof reply[0] === 'string' ? /^([^:]+):(\d+):(\d+)$/.exec(reply[0]) : null;
    if (!stamp) throw unavailable();
    const [, epoch = '', seq = '0', ownSeen = '0'] = stamp;
    if (epoch !== this.epoch) await this.learnOnce(epoch, Number(seq), Number(ownSeen), now);
    if (epoch === this.epoch) [this.seq, this.own] = [Math.max(this.seq, Number(seq)), Math.max(this.own, Number(ownSeen))];
    return (reply as unknown[]).slice(1);
  }

  /**
   * Redis's epoch is new to this replica: if it knew another, Redis lost what it held, and the marks
   * this replica made are put back (unless the write holds one now). Until they all are, it keeps
   * the old epoch, so its next mark script tries again. Every script on its way finds the new epoch
   * at once: one putting back (up to 10,000 marks) serves them all, each waiting for it.
   */
  private learnOnce(epoch: string, seq: number, own: number, now: number): Promise<void> {
    if (this.learning?.epoch !== epoch) {
      const done: Promise<void> = this.learnEpoch(epoch, seq, own, now).finally(() => {
        if (this.learning?.done === done) this.learning = undefined;
      });
      this.learning = { epoch, done };
    }
    return this.learning.done;
  }

  private async learnEpoch(epoch: string, seq: number, own: number, now: number): Promise<void> {
    if (this.epoch !== '') {
      const counted = await this.putBack(epoch, seq, now);
      if (!counted) return;
      // Each mark put back counted as a claim of this replica's: the most it saw, as any script's answer is read.
      for (const answer of counted) {
        const stamp = /^([^:]+):(\d+):(\d+)$/.exec(String(answer));
        if (stamp?.[1] === epoch) [seq, own] = [Math.max(seq, Number(stamp[2])), Math.max(own, Number(stamp[3]))];
      }
    }
    [this.epoch, this.seq, this.own] = [epoch, seq, own];
  }

  /**
   * Puts back the marks this replica keeps, in the new epoch: the first alone (its script sent whole
   * once, if Redis lost its scripts too), then RESTORE_BATCH at a time, so the queue every call of
   * this replica shares (10,000 commands) is never filled, nor a batch behind the command timeout.
   * Each script's stamp, or undefined if one failed (the next script that finds the epoch tries again).
   */
  private async putBack(epoch: string, seq: number, now: number): Promise<unknown[] | undefined> {
    const marks = this.kept.kept();
    const stamps: unknown[] = [];
    for (let from = 0; from < marks.length; from = stamps.length) {
      const batch = marks.slice(from, from === 0 ? 1 : from + RESTORE_BATCH);
      const results = await Promise.allSettled(
        batch.map(([write, { at, outcome, owner, unread, told, audit }]) =>
          this.run(RESTORE_WRITE, this.markKeys(write), [
            ...this.clock(now),
            `${epoch}:${seq}:`,
            this.lossQuietMs,
            at,
            outcome,
            owner,
            WRITE_MEMORY_MS,
            unread ? '1' : told ? 'told' : '0',
            audit ?? '',
          ]),
        ),
      );
      for (const result of results) {
        if (result.status === 'rejected') return undefined;
        stamps.push((result.value as unknown[] | undefined)?.[0]);
      }
    }
    return stamps;
  }

  /**
   * A confirmation's end, kept as long as a write's last attempt. Only its own use writes it, but a
   * spent store that lost it lets it be spent again: "refused" (nothing sent) never replaces an end that went out.
   */
  async noteConfirmation(confirmation: string, attempt: Attempt) {
    if (attempt.outcome === 'in-flight') return;
    const only = attempt.outcome === 'refused' ? ['NX'] : [];
    await this.command(['SET', this.confirmationKey(confirmation), `${attempt.outcome} ${attempt.at}`, 'PX', WRITE_MEMORY_MS, ...only]);
  }

  async confirmationOutcome(confirmation: string) {
    const held = await this.command(['GET', this.confirmationKey(confirmation)]);
    if (held === null) return undefined;
    const [outcome, at] = String(held).split(' ');
    return attemptOf([outcome, Number(at)], ['done', 'unknown', 'refused']);
  }

  /**
   * This replica's clock as it dates its yeses and attempts (the journal's forward clock, which a
   * clock set back does not move back): the latest time a caller gave or the system clock reads,
   * moved on by the monotonic clock (at half its rate while ahead, as forwardNow). Its own reports
   * of its lead go by it, so they are never below the lead its yeses were dated with.
   */
  private forwardNow(given = 0): number {
    return this.forward.now(given);
  }

  /** A mark script's first arguments: the caller's now, the clock it runs by ('': Redis TIME), and this replica's id. */
  private clock(now: number): [number, number | string, string] {
    const caller = Math.floor(now);
    return [caller, this.callerClock ? caller : '', this.replica];
  }

  /**
   * A mark script's keys: the write's last attempt, the replicas' clocks, Redis's epoch, each
   * replica's claims in it, and the most any replica leads as last read ("lead readAt").
   */
  private markKeys(write: string): string[] {
    const guard = `${this.prefix}guard:`;
    return [this.writeKey(write), `${guard}clock-leads`, `${guard}epoch`, `${guard}claims`, `${guard}clock-most`, this.orphanWatchKey(), this.owedOrphansKey()];
  }

  /** The marks in flight that keep an audit line, scored by when they were last renewed (CLAIM_WRITE). */
  private orphanWatchKey(): string {
    return `${this.prefix}guard:orphan-watch`;
  }

  private owedOrphansKey(): string {
    return `${this.prefix}guard:orphan-lines`;
  }

  private counterKey(counter: string): string {
    return `${this.prefix}guard:count:${counter}`;
  }

  private writeKey(write: string): string {
    return `${this.prefix}guard:write:${write}`;
  }

  private confirmationKey(confirmation: string): string {
    return `${this.prefix}guard:confirmation:${confirmation}`;
  }

  private recordKey(key: string): string {
    return `${this.prefix}guard:idempotency:${key}`;
  }

  /** One command; any failure (down, stalled, refused) is the store being unavailable. */
  private async command(args: Array<string | number>): Promise<unknown> {
    try {
      return await this.redis.command(args);
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** A script by its sha, sent whole the first time Redis does not know it. */
  private async run(code: Script, keys: string[], args: Array<string | number>): Promise<unknown> {
    const tail = [keys.length, ...keys, ...args];
    try {
      return await this.redis.command(['EVALSHA', code.sha, ...tail]);
    } catch (error) {
      if (!(error instanceof RedisReplyError && error.message.startsWith('NOSCRIPT'))) throw unavailable(error);
    }
    return this.command(['EVAL', code.source, ...tail]);
  }
}

/**
 * How long a record that expires at `expiresAt` (this server's clock) is kept from now: Redis
 * measures it by its own clock. A time on this server's clock given to Redis (PEXPIREAT) was past
 * already, by Redis's, on a server whose clock is behind by more than the record's life.
 */
function lifetime(expiresAt: number): number {
  return Math.max(1, Math.ceil(expiresAt - Date.now()));
}

/** The orphan's line from the text its mark kept (audit.ts orphanedLine); undefined for text that is not such a line. */
function orphanLine(kept: string): AuditEntry | undefined {
  try {
    return orphanedLine(JSON.parse(kept));
  } catch {
    return undefined;
  }
}

/** What an owner's mark is to be settled as, for the Owed that settles it again. */
function settleItem(owner: string, outcome: 'done' | 'unknown' | 'refused', unread = '0', line?: AuditEntry): string {
  return JSON.stringify(line ? [owner, outcome, unread, line] : [owner, outcome, unread]);
}

/** A write's attempt from a script's {outcome, at} (one of `outcomes`); anything else fails closed. */
function attemptOf(reply: unknown, outcomes = ['in-flight', 'done', 'unknown']): Attempt {
  const [outcome, at] = Array.isArray(reply) ? (reply as unknown[]) : [];
  if (typeof at !== 'number' || !Number.isFinite(at) || !outcomes.includes(outcome as string)) throw unavailable();
  return { at, outcome: outcome as Attempt['outcome'] };
}

/** The model's message; `cause`, what Redis answered, for the start-up check. */
function unavailable(cause?: unknown): InputError {
  return Object.assign(new InputError(GUARD_STORE_UNAVAILABLE), cause === undefined ? {} : { cause });
}

/** Redis's answers that pass (a Redis loading its data, busy, or failing over): the start goes on, with a warning. */
const PASSING_REFUSALS = /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN)\b/;

/**
 * Why every write would be refused, from what the start-up mark script failed with: Redis refused
 * it (an ACL without EVAL or TIME, a read-only replica, a proxy or cluster that splits its keys).
 * Not for a Redis that did not answer (it is reachable, or the service would not have connected).
 */
function scriptRefusal(failed: unknown): { message: string; transient: boolean } | undefined {
  const cause = failed instanceof Error ? failed.cause : undefined;
  if (!(cause instanceof RedisReplyError)) return undefined;
  const answer = cause.message.split('\n')[0]?.slice(0, 300) ?? '';
  return {
    transient: PASSING_REFUSALS.test(answer),
    message:
      `the service's Redis (ENGAGE_REDIS_URL) refused the guardrails' write-mark script (${answer}), so every write would be refused, nothing sent. ` +
      "Its user must be allowed EVAL and EVALSHA and, inside them, TIME and the string, hash, list and sorted-set commands (ACL +@scripting +time +@string +@hash +@list +@sortedset +@keyspace), on a primary (not a read-only replica), reached directly or through a proxy that runs a script's keys on one Redis",
  };
}

/** The record and its first answer from HMGET record reply; anything unreadable fails closed. */
function recordOf(held: unknown): IdempotencyRecord | undefined {
  if (!Array.isArray(held)) throw unavailable();
  const [record, reply] = held as [unknown, unknown];
  if (record === null) return undefined;
  try {
    const parsed = JSON.parse(String(record)) as IdempotencyRecord;
    return typeof reply === 'string' ? { ...parsed, reply: JSON.parse(reply) as CallToolResult } : parsed;
  } catch {
    throw unavailable();
  }
}
