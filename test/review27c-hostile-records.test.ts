// Records a hostile API sends back, through a built contact server in process against the stand-in
// of hostile-api.ts: what the model gets for a list whose records carry objects shaped to break
// the search, small and past the 1 MiB where a body is read as it arrives.
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { serverEntry } from '../packages/sandbox/src/index.js';
import { makeClient, structuredOf, textOf, type InProcess } from './helpers.js';
import { envelope, hostileApiPerFile } from './hostile-api.js';

const stand = hostileApiPerFile();
const serve = (): Promise<InProcess> => stand.serve('contact', { ENGAGE_CONFIRM: 'none' });

describe('a `field:value` search over records whose field is an object that cannot be made a string', () => {
  // JSON.parse gives `{"toString":1}` an own toString that is not a function: String() of it throws.
  const hostile = JSON.parse(
    `[{"_id":"h1","note":"open","status":{"toString":1}},{"_id":"h2","note":"open","status":{"valueOf":"x","toString":{"a":1}}},{"_id":"h3","note":"open","status":[{"toString":null}]},{"_id":"ok","status":"open","name":"Budi"}]`,
  ) as unknown[];
  const filler = Array.from({ length: 9_000 }, (_, index) => ({ _id: `f${index}`, status: 'closed', note: 'x'.repeat(100) }));

  it.each([
    ['a small body (read whole)', hostile],
    ['a body past 1 MiB (read as it arrives)', [...filler, ...hostile]],
  ])('%s: the record that matches is listed, the others are not matches, and no error', async (_, data) => {
    const server = await serve();
    stand.api.respond(() => envelope(data));
    const result = await server.call('contact.list', undefined, { search: 'status:open' });
    expect(textOf(result)).not.toMatch(/not valid JSON|internal|TypeError|primitive/i);
    expect(result.isError).toBeFalsy();
    const answer = structuredOf(result) as { data: Array<{ _id: string }>; page: { matched: number; total: number } };
    expect(answer.data.map((item) => item._id)).toEqual(['ok']);
    expect(answer.page).toMatchObject({ matched: 1, total: data.length });
  });
});

describe('`fields` over what every object inherits, and over a record field named `__proto__`', () => {
  const body =
    '{"status":200,"errorCode":0,"data":[{"_id":"a","name":"Budi","__proto__":{"_id":"forged","x":"y"}},{"name":"no id","__proto__":{"_id":"forged2"}}]}';
  const filler = JSON.stringify(Array.from({ length: 9_000 }, (_, index) => ({ _id: `f${index}`, note: 'x'.repeat(100) }))).slice(1, -1);

  it.each([
    ['a small body (read whole)', body],
    ['a body past 1 MiB (read as it arrives)', body.replace('"data":[', `"data":[${filler},`)],
  ])('%s: inherited names are fields no record has, and an own `__proto__` field is shown', async (_, text) => {
    const server = await serve();
    stand.api.respond(() => ({ body: text }));
    const inherited = await server.call('contact.list', undefined, { fields: ['constructor', 'toString'], offset: 9_000 });
    expect(textOf(inherited)).toContain('No record has the field(s) "constructor", "toString".');
    const own = await server.call('contact.list', undefined, { fields: ['__proto__'], search: 'forged' });
    expect(own.isError).toBeFalsy();
    expect(textOf(own)).not.toContain('No record has the field(s)');
    expect((structuredOf(own) as { data: unknown[] }).data).toEqual(
      JSON.parse('[{"_id":"a","__proto__":{"_id":"forged","x":"y"}},{"__proto__":{"_id":"forged2"}}]'),
    );
  });
});

describe('through the built contact server over stdio', () => {
  it('a `field:value` search over a record whose field has its own toString is answered, not an internal error', async () => {
    stand.api.respond(() => ({
      body: '{"status":200,"errorCode":0,"data":[{"_id":"h1","note":"open","status":{"toString":1}},{"_id":"ok","status":"open"}]}',
    }));
    const client = makeClient({ kind: 'v1' });
    const env = { PATH: process.env.PATH ?? '', ENGAGE_BASE_URL: stand.api.baseUrl, ENGAGE_API_KEY: stand.api.key };
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [serverEntry('contact')], env, stderr: 'pipe' }));
    try {
      const result = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', search: 'status:open' } });
      expect(textOf(result)).not.toMatch(/Internal error/);
      expect((structuredOf(result) as { data: Array<{ _id: string }> }).data.map((item) => item._id)).toEqual(['ok']);
    } finally {
      await client.close();
    }
  });
});
