// review35: the answers kept for a repeat of a write its host cancelled (call/undelivered.ts) are
// bounded. With one bound for every key, oldest first, a tenant that cancelled many of its own
// writes pushed out another tenant's kept answer in remote mode, whose repeat was then sent again.
// Now each key keeps at most 8 of its own, so one key's writes push out only its own.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { expect, it } from 'vitest';
import type { ToolCall } from '../shared/src/call/context.js';
import { WriteJournal } from '../shared/src/call/journal.js';
import { keepUnread, takeUnread } from '../shared/src/call/undelivered.js';
import type { Operation } from '../shared/src/model/types.js';

const op = { id: 'channel.whatsapp.send', verifyWith: undefined } as unknown as Operation;
const params = (n: number) => ({ msisdn: '081234567890', message: `message ${n}` });
const answer = (n: number): CallToolResult => ({ content: [{ type: 'text', text: `Done ${n}` }], structuredContent: { outcome: 'done' } });

/** A call of `keyId` on the server whose journal is `journal`, cancelled by its host. */
const callOf = (journal: WriteJournal, keyId: string) => ({ caller: { journal, keyId }, request: {} }) as unknown as ToolCall;

/** A write of `keyId` carried out, whose host had cancelled the call: its answer kept. */
function carriedOutUnread(journal: WriteJournal, keyId: string, n: number): void {
  journal.attempt(keyId, op.id, params(n), 'in-flight');
  journal.attempt(keyId, op.id, params(n), 'done');
  keepUnread(callOf(journal, keyId), op, params(n), answer(n));
}

it("one key's many cancelled writes push out only its own kept answers, never another key's", () => {
  const journal = new WriteJournal();
  carriedOutUnread(journal, 'quiet-tenant', 0);
  for (let n = 1; n <= 300; n++) carriedOutUnread(journal, 'busy-tenant', n);
  expect(takeUnread(callOf(journal, 'quiet-tenant'), op, params(0))?.content).toContainEqual(answer(0).content[0]);
  // The busy key keeps its own latest few, and forgot its oldest.
  expect(takeUnread(callOf(journal, 'busy-tenant'), op, params(300))?.content).toContainEqual(answer(300).content[0]);
  expect(takeUnread(callOf(journal, 'busy-tenant'), op, params(1))).toBeUndefined();
});
