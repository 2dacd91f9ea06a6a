// Review 43 (D5): the orphaned write's audit line as the file store finds it in its sweep of
// writes/ (each process's first turn), for a write never claimed again. A mark in flight keeps its
// line but for the outcome; once its lease has run out (its server stopped renewing it) the first
// store to sweep appends it as `unknown` (`orphaned`), and no other store does again. A mark still
// renewed is left alone; one expired altogether gets its line before its file is swept away; a
// settled mark keeps no line. Stores of one state directory with clocks of their own.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import type { PendingAudit } from '../shared/src/call/guard-store.js';
import { NO_YES, WRITE_MARK_LEASE_MS } from '../shared/src/call/shared-mark.js';

const root = mkdtempSync(join(tmpdir(), 'review43-sweep-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const AUDIT_CLI = new URL('../packages/audit/bin/engage-mcp-audit.js', import.meta.url).pathname;

const T0 = Date.parse('2026-11-29T12:00:00Z');
const PENDING: PendingAudit = {
  time: new Date(T0).toISOString(),
  key: 'fingerprint-0001',
  client: { name: 'host', version: '1' },
  server: 'engage-mcp-contact',
  operationId: 'contact.delete',
  paramsDigest: 'digest',
  params: { id: 'c-1' },
  confirmation: 'token',
};

/** A store of `dir` whose clock reads `at` (no steady clock: its leases are the system clock's alone). */
const storeAt = (dir: string, at: number) => new FileGuardStore(dir, join(dir, 'audit.jsonl'), () => at, undefined);

/** A store's first turn (any turn: a count taken), after reading the audit secret as ready() does. */
async function firstTurn(dir: string, at: number): Promise<void> {
  const store = storeAt(dir, at);
  await store.auditSecret();
  await store.take('warm-up', 1, 10, at + 60_000);
}

const lines = (dir: string) =>
  existsSync(join(dir, 'audit.jsonl'))
    ? readFileSync(join(dir, 'audit.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
    : [];
const markFile = (dir: string, write: string) => join(dir, 'writes', `${createHash('sha256').update(write).digest('hex')}.json`);
const cli = (dir: string, ...args: string[]) => execFileSync(process.execPath, [AUDIT_CLI, ...args, '--state-dir', dir], { encoding: 'utf8' });

async function claimed(write = 'w'): Promise<string> {
  const dir = mkdtempSync(join(root, 'state-'));
  expect(await storeAt(dir, T0).claimWrite(write, 'owner', NO_YES, T0, T0, PENDING)).toBeUndefined();
  return dir;
}

describe('review43: an orphaned mark found by the sweep of a store first used after its lease ran out', () => {
  it('gets one unknown line, dated at its claim, however many stores sweep after it; verify and tail read it', async () => {
    const dir = await claimed();
    const after = T0 + WRITE_MARK_LEASE_MS + 1_000;
    await firstTurn(dir, after);
    await firstTurn(dir, after + 1_000);
    expect(lines(dir)).toHaveLength(1);
    expect(lines(dir)[0]).toMatchObject({ ...PENDING, outcome: 'unknown', orphaned: true, seq: 1 });
    // The mark itself is as it was, without the line it kept: still what the double-send guard reads.
    const mark = JSON.parse(readFileSync(markFile(dir, 'w'), 'utf8')) as { value: Record<string, unknown> };
    expect(mark.value).toMatchObject({ outcome: 'in-flight', owner: 'owner' });
    expect(mark.value.audit).toBeUndefined();
    expect(cli(dir, 'verify')).toMatch(/1 lines?, the chain is intact/);
    expect(cli(dir, 'tail')).toMatch(
      /#1 2026-11-29T12:00:00\.000Z contact\.delete: unknown \(its server stopped with it at the API; recorded later by another\); confirmation: token; engage-mcp-contact by host 1/,
    );
  });

  it('a mark still within its lease is left alone, and a settled one keeps no line', async () => {
    const dir = await claimed();
    await firstTurn(dir, T0 + WRITE_MARK_LEASE_MS / 2);
    expect(lines(dir)).toHaveLength(0);
    await storeAt(dir, T0 + 1_000).settleWrite('w', 'owner', 'done');
    await firstTurn(dir, T0 + WRITE_MARK_LEASE_MS * 2);
    expect(lines(dir)).toHaveLength(0);
    expect(JSON.parse(readFileSync(markFile(dir, 'w'), 'utf8')).value.audit).toBeUndefined();
  });

  it('a mark expired altogether gets its line before its file is swept away', async () => {
    const dir = await claimed();
    await firstTurn(dir, T0 + 31 * 60_000);
    expect(lines(dir).map((line) => [line.outcome, line.orphaned])).toEqual([['unknown', true]]);
    expect(existsSync(markFile(dir, 'w'))).toBe(false);
  });

  it('the same write claimed again by a store already past its sweep: the orphan line once, before the new mark', async () => {
    const dir = await claimed();
    const later = T0 + WRITE_MARK_LEASE_MS + 1_000;
    await firstTurn(dir, T0 + 1_000); // swept while the mark was live
    const store = storeAt(dir, later);
    expect(await store.claimWrite('w', 'second', NO_YES, later, later, { ...PENDING, time: new Date(later).toISOString() })).toBeUndefined();
    expect(lines(dir)).toHaveLength(1);
    expect(lines(dir)[0]).toMatchObject({ time: PENDING.time, outcome: 'unknown', orphaned: true });
    // The new mark keeps its own line, for its own end.
    const mark = JSON.parse(readFileSync(markFile(dir, 'w'), 'utf8')) as { value: { owner: string; audit: { time: string } } };
    expect(mark.value.owner).toBe('second');
    expect(mark.value.audit.time).toBe(new Date(later).toISOString());
  });

  it("a settle given the write's line appends it in the settle's own turn: no moment in which the write has neither", async () => {
    const dir = await claimed();
    const store = storeAt(dir, T0 + 1_000);
    const line = { ...PENDING, time: new Date(T0 + 1_000).toISOString(), outcome: 'done' };
    expect(await store.settleWrite('w', 'owner', 'done', false, line)).toBe(true);
    expect(lines(dir)).toEqual([expect.objectContaining({ ...line, seq: 1 })]);
    expect(JSON.parse(readFileSync(markFile(dir, 'w'), 'utf8')).value).toEqual({ at: T0, outcome: 'done' });
    // Another's settle (the mark is not its own) appends nothing, and says so: its call appends its line itself.
    expect(await store.settleWrite('w', 'not-the-owner', 'done', false, line)).toBe(false);
    expect(lines(dir)).toHaveLength(1);
    expect(cli(dir, 'verify')).toMatch(/1 lines?, the chain is intact/);
  });
});
