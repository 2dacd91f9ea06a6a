// The line appended for an orphaned write (its server stopped with it at the API) is rebuilt from
// what its mark kept, which a store reads back from a file or a Redis hash as found: both stores
// share one parser (audit.ts orphanedLine). Only a line's own fields go into the record, each of its
// kind; anything else is no line at all.
import { describe, expect, it } from 'vitest';
import { orphanedLine } from '../shared/src/call/audit.js';

const kept = {
  time: '2026-11-29T12:00:00.000Z',
  key: 'AbCdEfGh12345678',
  client: { name: 'host', version: '1' },
  server: 'engage-mcp-contact',
  operationId: 'contact.delete',
  paramsDigest: 'digest',
  params: { id: 'c1' },
  confirmation: 'token',
};

describe('orphanedLine', () => {
  it('is the kept line, outcome unknown and orphaned', () => {
    expect(orphanedLine(kept)).toEqual({ ...kept, outcome: 'unknown', orphaned: true });
  });

  it('keeps only a line’s fields: nothing else a file or hash holds reaches the record', () => {
    const line = orphanedLine({ ...kept, outcome: 'done', note: 'Budi 0812', client: { name: 'host', extra: 'Budi 0812' } });
    expect(line).toEqual({ ...kept, client: { name: 'host' }, outcome: 'unknown', orphaned: true });
    expect(JSON.stringify(line)).not.toContain('Budi');
  });

  it('is no line for what is not a kept line', () => {
    for (const bad of [
      null,
      'text',
      [kept],
      { ...kept, time: 1 },
      { ...kept, params: 'x' },
      { ...kept, params: [] },
      { ...kept, client: 'host' },
      { ...kept, idempotencyKeyDigest: 7 },
    ]) {
      expect(orphanedLine(bad), JSON.stringify(bad)).toBeUndefined();
    }
  });
});
