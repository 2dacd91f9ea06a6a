// Answers that lie about themselves, from the hostile stand-in of hostile-api.ts, through a campaign
// server in process: a body compressed though nothing asked for it, a 304 to a request that was not
// conditional, headers of 100 KB. Each must be told as what it is (not as a broken connection, a
// malformed body or a redirect), a write sent once and its outcome said to be unknown, and a read
// not asked again for an answer that will be the same.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { textOf, type InProcess } from './helpers.js';
import { envelope, hostileApiPerFile, type Reply } from './hostile-api.js';

const stand = hostileApiPerFile();
const serve = (): Promise<InProcess> => stand.serve('campaign', { ENGAGE_CONFIRM: 'none' });

const good = JSON.stringify(envelope({ id: 'c1', status: 'sent' }).body);
const CASES: Array<[string, () => Reply, RegExp]> = [
  [
    'a gzip body nobody asked for',
    () => ({ headers: { 'content-encoding': 'gzip' }, body: gzipSync(good) }),
    /its body was compressed \(gzip\), which this server did not ask for and does not unpack/,
  ],
  [
    'a brotli body nobody asked for',
    () => ({ headers: { 'content-encoding': 'br' }, body: 'abcd' }),
    /its body was compressed \(br\), which this server did not ask for/,
  ],
  [
    'a 304 to a request that was not conditional',
    () => ({ status: 304, body: '' }),
    /The API answered HTTP 304 Not Modified to a request that was not conditional/,
  ],
  ['an answer with no status line (not HTTP)', () => ({ raw: good }), /The API's answer did not follow HTTP\/1\.1, so it was not read/],
  [
    'a chunked body with a broken chunk size',
    () => ({ raw: `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n${good}\r\n0\r\n\r\n` }),
    /The API's answer did not follow HTTP\/1\.1, so it was not read/,
  ],
  [
    'a 204 with a body',
    () => ({ raw: `HTTP/1.1 204 No Content\r\ncontent-length: ${good.length}\r\n\r\n${good}` }),
    /The API's answer did not follow HTTP\/1\.1/,
  ],
  ['100 KB of headers', () => ({ headers: { 'x-junk': 'a'.repeat(100_000) }, body: good }), /The API answered with headers larger than this server reads/],
];

describe('answers that lie about themselves are told as what they are', () => {
  it.each(CASES)('%s: a read is asked once and told what came back', async (_, reply, told) => {
    const server = await serve();
    stand.api.respond(reply);
    const result = await server.call('campaign.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(told);
    expect(textOf(result)).not.toMatch(/redirect|broke|not valid JSON|ENGAGE_BASE_URL/);
    expect(stand.api.requests).toHaveLength(1);
  });

  it.each(CASES)('%s: a write is sent once and its outcome is unknown', async (_, reply, told) => {
    const server = await serve();
    stand.api.respond(reply);
    const result = await server.call('campaign.send', { id: 'c1' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(told);
    expect(textOf(result)).toMatch(/The outcome is unknown: campaign\.send may have been carried out, so it was not repeated/);
    expect(textOf(result)).not.toMatch(/redirect|broke|not valid JSON/);
    expect(stand.api.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
  });

  it('a content-encoding that is not a known name is not repeated to the model (it is the API text)', async () => {
    const server = await serve();
    stand.api.respond(() => ({ headers: { 'content-encoding': `x-${stand.api.key}` }, body: 'zz' }));
    const result = await server.call('campaign.list');
    expect(textOf(result)).toMatch(/its body was compressed, which this server did not ask for/);
    expect(textOf(result)).not.toContain(stand.api.key.slice(9, 25));
  });
});

describe('an answer whose status came but whose body trickles past the deadline', () => {
  async function slow(): Promise<InProcess> {
    const server = await stand.serve('campaign', { ENGAGE_CONFIRM: 'none', ENGAGE_TIMEOUT_MS: '400' });
    stand.api.respond(() => ({ body: good, bodyDelayMs: 5_000 }));
    return server;
  }

  it('a write is sent once, and told its answer had begun (HTTP 200) and that its outcome is unknown', async () => {
    const server = await slow();
    const result = await server.call('campaign.send', { id: 'c1' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/The API did not answer within 400 ms in full: its answer had begun \(HTTP 200\), but the rest did not arrive in time/);
    expect(textOf(result)).toMatch(/The outcome is unknown: campaign\.send may have been carried out, so it was not repeated/);
    expect(stand.api.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
  });

  it('a read is told the same, and asked again only within the retries for a timeout', async () => {
    const server = await slow();
    const result = await server.call('campaign.list');
    expect(textOf(result)).toMatch(/did not answer within 400 ms in full: its answer had begun \(HTTP 200\)/);
    expect(stand.api.requests.length).toBeLessThanOrEqual(3);
  });
});

describe('an envelope whose status or errorCode is not an integer (the API documents both as integers)', () => {
  it.each([['status 200.5', '{"status":200.5,"errorCode":0,"data":{"id":"c1"}}']])('%s: a write is not "Done", its outcome is unknown', async (_, body) => {
    const server = await serve();
    stand.api.respond(() => ({ body }));
    const result = await server.call('campaign.send', { id: 'c1' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/without its \{status, errorCode, data\} envelope\. The outcome is unknown: campaign\.send may have been carried out/);
  });
});
