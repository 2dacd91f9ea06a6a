// Answers of writes that need no yes whose host never read them: it cancelled the call (the
// person's stop, its own request timeout, a dropped connection) while the write was at the API,
// and the API carried it out. The write is not abandoned (api-client.ts), but a host that asks
// again would send it again with nothing said, the first "Done" never seen. The same write asked
// again is answered with that first answer instead, once; a call after that sends it again.
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Operation, Params } from '../model/types.js';
import type { ToolCall } from './context.js';
import { forwardNow, writeDigest, type WriteJournal } from './journal.js';
import { answerNeverRead } from './outcomes.js';

/** As long as the journal remembers an ended write (journal.ts ATTEMPT_MEMORY_MS): a host's retry after its timeout comes well within it. */
const KEPT_MS = 30 * 60 * 1000;
/**
 * At most this many of one key, and of all keys together (each one answer, already capped in
 * size): a key over its own bound forgets its own oldest, so a tenant that cancels many of its
 * writes pushes out only its own; past the total, a key that holds the most gives up its oldest.
 */
const MOST_KEPT_PER_KEY = 8;
const MOST_KEPT = 256;

interface Untold {
  /** When the write was marked in flight: the journal's time of its attempt. */
  at: number;
  keptAt: number;
  reply: CallToolResult;
  /** Noted as unread in the store other servers share too: given only while that note is there to take. */
  shared: boolean;
}

/** What one server keeps: by key, then by write (its digest), oldest first. */
interface Kept {
  byKey: Map<string, Map<string, Untold>>;
  size: number;
}

/** One per journal, so per server: a journal keeps every key's writes apart, and so do these. */
const byJournal = new WeakMap<WriteJournal, Kept>();

function keptOf(journal: WriteJournal): Kept {
  let kept = byJournal.get(journal);
  if (!kept) {
    kept = { byKey: new Map(), size: 0 };
    byJournal.set(journal, kept);
  }
  return kept;
}

function forget(kept: Kept, keyId: string, digest: string): void {
  const own = kept.byKey.get(keyId);
  if (!own?.delete(digest)) return;
  kept.size--;
  if (own.size === 0) kept.byKey.delete(keyId);
}

/** The oldest of the key's own past its bound; past the total, the oldest of the key that holds the most. */
function keepWithinBounds(kept: Kept, keyId: string): void {
  const own = kept.byKey.get(keyId);
  if (own && own.size > MOST_KEPT_PER_KEY) forget(kept, keyId, own.keys().next().value as string);
  if (kept.size <= MOST_KEPT) return;
  const [largest, most] = [...kept.byKey].reduce((a, b) => (b[1].size > a[1].size ? b : a));
  forget(kept, largest, most.keys().next().value as string);
}

/** The call's host had cancelled it by the time its answer was ready: nothing it was sent was read. */
export function answerUnread(call: ToolCall): boolean {
  return call.request.signal?.aborted === true;
}

/**
 * Keeps the answer of a write that was carried out but whose host cancelled the call: the same
 * write asked again gets it. `shared`: the shared store noted it as unread too (shared-mark.ts).
 */
export function keepUnread(call: ToolCall, op: Operation, params: Params, reply: CallToolResult, shared = false): void {
  const { journal, keyId } = call.caller;
  const attempt = journal.lastSent(keyId, op.id, params);
  if (attempt?.outcome !== 'done') return;
  const kept = keptOf(journal);
  const digest = writeDigest(keyId, op.id, params);
  forget(kept, keyId, digest);
  let own = kept.byKey.get(keyId);
  if (!own) {
    own = new Map();
    kept.byKey.set(keyId, own);
  }
  own.set(digest, { at: attempt.at, keptAt: forwardNow(), reply, shared });
  kept.size++;
  keepWithinBounds(kept, keyId);
}

/**
 * The unread answer of exactly this write, taken (a second identical call sends it again), with a
 * note that it is repeated; undefined when there is none, or the write went out again since.
 */
export function takeUnread(call: ToolCall, op: Operation, params: Params): CallToolResult | undefined {
  return takeKeptUnread(call, op, params)?.reply;
}

/** takeUnread's answer, and whether its note in the shared store is to be taken before it is given (tool-call.ts). */
export function takeKeptUnread(call: ToolCall, op: Operation, params: Params): { reply: CallToolResult; shared: boolean } | undefined {
  const { journal, keyId } = call.caller;
  const kept = byJournal.get(journal);
  // Nearly always none of this key's: no digest is worked out then.
  if (!kept?.byKey.has(keyId)) return undefined;
  const digest = writeDigest(keyId, op.id, params);
  const found = kept.byKey.get(keyId)?.get(digest);
  if (!found) return undefined;
  forget(kept, keyId, digest);
  const last = journal.lastSent(keyId, op.id, params);
  if (found.keptAt < forwardNow() - KEPT_MS || last?.outcome !== 'done' || last.at !== found.at) return undefined;
  return { reply: answerNeverRead(op, found.reply, found.at), shared: found.shared };
}
