// Review 35 (the model's eye). "Find every contact tagged vip": a filtered page read "records 4–6
// of 40 (8 match the filter)", though the range and the next offset count the 8 matches, not the
// 40 records; and "1 match the filter". Now: "records 4–6 of the 8 that match the filter (40 in
// all)", "of the 1 that matches", and "none of the 40 matches the filter".
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { textOf } from './helpers.js';
import { inProcessPerFile } from './helpers/in-process-per-file.js';

const file = inProcessPerFile('contact');

describe('review35: a filtered page', () => {
  const vip = () => file.sandbox.tenant('A').contacts.filter((item) => (item.tags as string[] | undefined)?.includes('vip')).length;

  it('counts its range among the matches, and says how many the list holds in all', async () => {
    const total = file.sandbox.tenant('A').contacts.length;
    expect(vip()).toBeGreaterThan(3);
    const result = (await file.server.call('contact.list', undefined, { search: 'tags:vip', limit: 2, offset: 2 })) as CallToolResult;
    expect(textOf(result)).toMatch(new RegExp(`^contact\\.list: records 3–4 of the ${vip()} that match the filter \\(${total} in all\\)\\.`));
  });

  it('with one match or none, says so plainly', async () => {
    const total = file.sandbox.tenant('A').contacts.length;
    const one = file.sandbox.tenant('A').contacts[0]!;
    const single = (await file.server.call('contact.list', undefined, { search: `_id:${one._id}` })) as CallToolResult;
    expect(textOf(single)).toMatch(new RegExp(`^contact\\.list: records 1–1 of the 1 that matches the filter \\(${total} in all\\)\\. No more records\\.`));
    const none = (await file.server.call('contact.list', undefined, { search: 'tags:nobody-has-this' })) as CallToolResult;
    expect(textOf(none)).toMatch(new RegExp(`^contact\\.list: no records: none of the ${total} matches the filter\\. No more records\\.`));
  });
});
