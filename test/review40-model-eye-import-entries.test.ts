// Review 40 (the model's eye). "Import these 30 contacts; two numbers are malformed": the answer
// named params.users.28.msisdn and params.users.29.msisdn, counted from 0, and a model told the
// person that rows 28 and 29 of their list were wrong (rows 29 and 30) without saying whose. Now the
// answer says how entries are counted and names each entry a problem is in: its place counted from
// 1, of how many, and its name.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { textOf } from './helpers.js';
import { inProcessPerFile } from './helpers/in-process-per-file.js';

const file = inProcessPerFile('contact');
const good = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ name: `Pelanggan ${i + 1}`, msisdn: `62813000000${String(i + 1).padStart(2, '0')}` }));

describe('review40: the entries of an import that a problem is in', () => {
  it('are named as a person counts them, with their names, and nothing is sent', async () => {
    file.sandbox.clearLogs();
    const users = [...good(28), { name: 'Salah Satu', msisdn: '62812345' }, { name: 'Salah Dua', msisdn: '+62 812 ABC 999', email: 'dua@example' }];
    const text = textOf((await file.server.call('contact.import', { users })) as CallToolResult);
    expect(text).toMatch(/^Invalid params for contact\.import: params\.users\.28\.msisdn is not a valid number/);
    expect(text).toContain(
      'Entries are counted from 0: params.users.28 is entry 29 of 30 (“Salah Satu”); params.users.29 is entry 30 of 30 (“Salah Dua”). Nothing was sent.',
    );
    expect(file.sandbox.requests()).toEqual([]);
  });

  it('an entry without a name is named by its place; an error in no list names no entry', async () => {
    const unnamed = textOf((await file.server.call('contact.import', { users: [...good(2), { msisdn: '6281300000099' }] })) as CallToolResult);
    expect(unnamed).toContain('params.users.2.name is required');
    expect(unnamed).toContain('Entries are counted from 0: params.users.2 is entry 3 of 3. Nothing was sent.');
    const single = textOf((await file.server.call('contact.create', { name: 'Salah Satu', msisdn: '62812345' })) as CallToolResult);
    expect(single).toContain('params.msisdn is not a valid number');
    expect(single).not.toContain('Entries');
  });
});
