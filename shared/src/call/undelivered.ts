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
/** At most this many, the oldest forgotten first: each is one answer, already capped in size. */
const MOST_KEPT = 256;

interface Untold {
  /** When the write was marked in flight: the journal's time of its attempt. */
  at: number;
  keptAt: number;
  reply: CallToolResult;
}

/** One set per journal, so per server: a journal keeps every key's writes apart, and so do these (its digest holds the key). */
const byJournal = new WeakMap<WriteJournal, Map<string, Untold>>();

function untoldOf(journal: WriteJournal): Map<string, Untold> {
  let untold = byJournal.get(journal);
  if (!untold) {
    untold = new Map();
    byJournal.set(journal, untold);
  }
  return untold;
}

/** The call's host had cancelled it by the time its answer was ready: nothing it was sent was read. */
export function answerUnread(call: ToolCall): boolean {
  return call.request.signal?.aborted === true;
}

/** Keeps the answer of a write that was carried out but whose host cancelled the call: the same write asked again gets it. */
export function keepUnread(call: ToolCall, op: Operation, params: Params, reply: CallToolResult): void {
  const { journal, keyId } = call.caller;
  const attempt = journal.lastSent(keyId, op.id, params);
  if (attempt?.outcome !== 'done') return;
  const untold = untoldOf(journal);
  const digest = writeDigest(keyId, op.id, params);
  untold.delete(digest);
  untold.set(digest, { at: attempt.at, keptAt: forwardNow(), reply });
  for (const oldest of untold.keys()) {
    if (untold.size <= MOST_KEPT) break;
    untold.delete(oldest);
  }
}

/**
 * The unread answer of exactly this write, taken (a second identical call sends it again), with a
 * note that it is repeated; undefined when there is none, or the write went out again since.
 */
export function takeUnread(call: ToolCall, op: Operation, params: Params): CallToolResult | undefined {
  const { journal, keyId } = call.caller;
  const untold = byJournal.get(journal);
  // Nearly always none: no digest is worked out then.
  if (!untold?.size) return undefined;
  const digest = writeDigest(keyId, op.id, params);
  const found = untold.get(digest);
  if (!found) return undefined;
  untold.delete(digest);
  const last = journal.lastSent(keyId, op.id, params);
  if (found.keptAt < forwardNow() - KEPT_MS || last?.outcome !== 'done' || last.at !== found.at) return undefined;
  return answerNeverRead(op, found.reply, found.at);
}
