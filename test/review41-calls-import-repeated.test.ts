// Review 41 (calls): contact.import's preview names the numbers an import gives twice or more, with
// the rows' names. A number a great many rows share (a shop's switchboard, written for every
// employee) named every row, and the statement grew past what can be shown: the import was refused,
// blamed on "what the API holds", though nothing in it was read from the API.
import { describe, expect, it } from 'vitest';
import { textOf } from './helpers.js';
import { hostileApiPerFile } from './hostile-api.js';

const stand = hostileApiPerFile();
const serve = () => stand.serve('contact', { ENGAGE_CONFIRM: 'all' });

describe('review41: numbers given twice or more in an import', () => {
  it('a number thousands of rows give is named with a few of the rows, and the preview is shown, not refused', async () => {
    const server = await serve();
    const users = Array.from({ length: 3_000 }, (_, i) => ({ name: `Karyawan Toko Batik Nusantara ${i + 1}`, msisdn: '021-5550-1234' }));
    const result = await server.call('contact.import', { users });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(textOf(result)).toContain(
      '- Numbers given twice or more in this import: 1 (622155501234: “Karyawan Toko Batik Nusantara 1”, “Karyawan Toko Batik Nusantara 2”, “Karyawan Toko Batik Nusantara 3” and 2,997 more rows).',
    );
  });
});
