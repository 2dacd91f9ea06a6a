// Review finding: a corrupted counter in state.json fails open.
// What must hold: the send caps fail closed. A state file whose counter is not a count (a string,
// null, an object: a hand edit, another tool, a partial restore) must make the store refuse (take
// answers not taken, or throws, so nothing is sent), never count it as zero or let any amount pass.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';

const root = mkdtempSync(join(tmpdir(), 'review-tampered-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const COUNTER = 'messages:key:2026-03-01';
const far = Date.now() + 24 * 60 * 60 * 1000;

async function takeWith(value: unknown): Promise<'taken' | 'refused' | 'threw'> {
  const dir = join(root, Math.random().toString(36).slice(2));
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, 'state.json'), JSON.stringify({ counters: { [COUNTER]: { value, expiresAt: far } }, records: {}, audit: {} }), { mode: 0o600 });
  try {
    const result = await new FileGuardStore(dir).take(COUNTER, 5, 100, far);
    return result.taken ? 'taken' : 'refused';
  } catch {
    return 'threw';
  }
}

describe('review: a tampered counters file', () => {
  it.each([
    ['"lots"', 'lots'],
    ['null', null],
    ['{}', {}],
    ['"9999"+garbage', '9999x'],
  ])('a counter of %s is not taken as room under the cap', async (_name, value) => {
    expect(await takeWith(value)).not.toBe('taken');
  });
});
