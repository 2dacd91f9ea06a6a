// What state.json must hold to be used: exactly the shapes the file store writes. Anything else (a
// hand edit, another tool, a partial restore) makes the store refuse every write that needs it,
// so a damaged counter can never read as room under a cap.
import { oneLine } from '../safe/sanitize.js';
import type { AuditHead } from './audit.js';
import { GuardStateError, type IdempotencyRecord } from './guard-store.js';
import { moveAsideCommand } from './own-files.js';

export interface Expiring<T> {
  value: T;
  expiresAt: number;
}

/**
 * A confirmed write's last attempt that went out (journal.ts `writeDigest` names it), as the
 * stdio processes of one machine share it: in flight (its owner renews `alive`), done or unknown;
 * `before` is the attempt it replaced, given back if this one is refused.
 */
export interface SentWrite {
  at: number;
  outcome: 'in-flight' | 'done' | 'unknown';
  owner?: string;
  alive?: number;
  /** The process that sends it, named as a lock names its owner (file-guard-store.ts): once it is dead, the outcome is unknown. */
  sender?: string;
  before?: { at: number; outcome: 'done' | 'unknown'; unread?: true };
  /** Done, for a call whose host had gone by its answer (a write needing no yes): the next identical claim is told, once. */
  unread?: true;
}

export interface GuardState {
  counters: Record<string, Expiring<number>>;
  /** Kept here by earlier versions only: each is a file of its own now (file-guard-store.ts), and these move there. */
  records: Record<string, Expiring<IdempotencyRecord>>;
  writes: Record<string, Expiring<SentWrite>>;
  /** Where the audit chain stands, per audit file: `verify` also notices lines cut from its end. */
  audit: Record<string, AuditHead>;
}

export const emptyState = (): GuardState => ({ counters: {}, records: {}, writes: {}, audit: {} });

/** The state in `text` (state.json at `path`), or a refusal that says what is wrong and what to do. */
export function parseGuardState(text: string, path: string): GuardState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw damagedState(path, 'it is not JSON');
  }
  if (!isObject(parsed)) throw damagedState(path, 'it is not a JSON object');
  return {
    counters: checkedMap(parsed.counters, 'counters', isCounter, path),
    records: checkedMap(parsed.records, 'records', isRecord, path),
    writes: checkedMap(parsed.writes, 'writes', isSentWrite, path),
    audit: checkedMap(parsed.audit, 'audit', isHead, path),
  };
}

export function damagedState(path: string, what: string): GuardStateError {
  return new GuardStateError(
    `the guardrails' state file ${path} is damaged (${what}), so the send caps and idempotency keys cannot be checked. ` +
      `Move it aside (${moveAsideCommand(path)}): the counters and idempotency keys then start over, and the audit record continues`,
  );
}

/** An idempotency record's or a write's own file (records/, writes/) that is not what the store wrote. */
export function damagedEntry(path: string, what: string): GuardStateError {
  return new GuardStateError(
    `the guardrails' state file ${path} is damaged (${what}), so this write's idempotency key or its earlier sends cannot be checked. ` +
      `Move it aside (${moveAsideCommand(path)}): only that one record then starts over`,
  );
}

function checkedMap<T>(value: unknown, name: string, valid: (entry: unknown) => entry is T, path: string): Record<string, T> {
  // A file from before this part of the state existed has none: that is not damage.
  if (value === undefined) return {};
  if (!isObject(value)) throw damagedState(path, `${name} is not an object`);
  for (const [key, entry] of Object.entries(value))
    if (!valid(entry)) throw damagedState(path, `${name}["${oneLine(key.slice(0, 80))}"] is not what the servers write`);
  return value as Record<string, T>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

function isCounter(entry: unknown): entry is Expiring<number> {
  return isObject(entry) && Number.isSafeInteger(entry.value) && (entry.value as number) >= 0 && isTime(entry.expiresAt);
}

export function isRecord(entry: unknown): entry is Expiring<IdempotencyRecord> {
  if (!isObject(entry) || !isTime(entry.expiresAt) || !isObject(entry.value)) return false;
  const { operationId, digest, at, reply } = entry.value;
  return typeof operationId === 'string' && typeof digest === 'string' && isTime(at) && (reply === undefined || isObject(reply));
}

const isSentOutcome = (value: unknown): value is 'done' | 'unknown' => value === 'done' || value === 'unknown';

export function isSentWrite(entry: unknown): entry is Expiring<SentWrite> {
  if (!isObject(entry) || !isTime(entry.expiresAt) || !isObject(entry.value)) return false;
  const { at, outcome, owner, alive, sender, before, unread } = entry.value;
  const beforeOk = before === undefined || (isObject(before) && isTime(before.at) && isSentOutcome(before.outcome));
  return (
    isTime(at) &&
    (outcome === 'in-flight' || isSentOutcome(outcome)) &&
    (owner === undefined || typeof owner === 'string') &&
    (alive === undefined || isTime(alive)) &&
    (sender === undefined || typeof sender === 'string') &&
    (unread === undefined || unread === true) &&
    beforeOk
  );
}

function isHead(entry: unknown): entry is AuditHead {
  return isObject(entry) && Number.isSafeInteger(entry.seq) && (entry.seq as number) >= 0 && typeof entry.mac === 'string';
}
