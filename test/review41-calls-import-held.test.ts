// Review 41 (calls): contact.import's preview against a hostile or merely unusual API (the stand-in
// of hostile-api.ts). The spec gives no type or form for a listed contact's msisdn, and no order
// for the list; the preview names the import's numbers a contact already has, and the yes is bound
// to those numbers and their contacts' names.
import { describe, expect, it } from 'vitest';
import { structuredOf, textOf } from './helpers.js';
import { envelope, hostileApiPerFile } from './hostile-api.js';

const stand = hostileApiPerFile();
const serve = () => stand.serve('contact', { ENGAGE_CONFIRM: 'all' });

describe('review41: numbers a contact already has, in an import preview', () => {
  it('finds a held number however the API spells it (a JSON number, +62 with spaces, 0812-…)', async () => {
    const server = await serve();
    stand.api.respond(() =>
      envelope([
        { _id: 'c1', name: 'Angka', msisdn: 6281300000001 },
        { _id: 'c2', name: 'Plus', msisdn: '+62 813-0000-0002' },
        { _id: 'c3', name: 'Nol', msisdn: '0813-0000-0003' },
      ]),
    );
    const users = [1, 2, 3, 4].map((n) => ({ name: `Baru ${n}`, msisdn: `628130000000${n}` }));
    const preview = textOf(await server.call('contact.import', { users }));
    expect(preview).toContain(
      '- Numbers a contact already has (of the 3 contacts the API lists now): 3 (6281300000001: “Angka”; 6281300000002: “Plus”; 6281300000003: “Nol”).',
    );
  });

  it('a yes holds when the API lists two contacts of one number in another order at the yes', async () => {
    const server = await serve();
    let reads = 0;
    stand.api.respond((request) => {
      if (request.method !== 'GET') return envelope({ imported: 1 });
      reads += 1;
      const both = [
        { _id: 'c1', name: 'Budi', msisdn: '6281300000001' },
        { _id: 'c2', name: 'Budi Kantor', msisdn: '6281300000001' },
      ];
      return envelope(reads % 2 === 1 ? both : both.reverse());
    });
    const users = [{ name: 'Budi Baru', msisdn: '6281300000001' }];
    const preview = await server.call('contact.import', { users });
    const done = await server.call('contact.import', { users }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    expect(textOf(preview)).toContain('6281300000001: “Budi Kantor”, “Budi”');
  });

  it('a number thousands of listed contacts share is named with a few of them, and the preview is shown, not refused', async () => {
    const server = await serve();
    const many = Array.from({ length: 5_000 }, (_, i) => ({ _id: `c${i}`, name: `Kontak ${'x'.repeat(40)} ${i}`, msisdn: '6281300000001' }));
    stand.api.respond(() => envelope(many));
    const result = await server.call('contact.import', { users: [{ name: 'Baru', msisdn: '6281300000001' }] });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(textOf(result)).toContain('and 4,997 more contacts');
  });
});
