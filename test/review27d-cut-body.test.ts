// Review 27d: a body cut short by the connection closing is a broken connection, not an answer that
// "did not follow HTTP/1.1". With `connection: close` (an HTTP/1.0-style server, a proxy under load)
// the HTTP client reports the cut as a content-length mismatch; with keep-alive the very same cut is
// "other side closed". Both are the transport breaking mid-answer: a read is asked again (and the
// next answer may be whole), a write is sent once with its outcome unknown.
import { describe, expect, it } from 'vitest';
import { textOf, type InProcess } from './helpers.js';
import { envelope, hostileApiPerFile, type Reply } from './hostile-api.js';

const stand = hostileApiPerFile();
const serve = (): Promise<InProcess> => stand.serve('campaign', { ENGAGE_CONFIRM: 'none' });

const good = JSON.stringify(envelope({ id: 'c1', status: 'sent' }).body);
const list = JSON.stringify(envelope([{ id: 'c1', name: 'Spring' }]).body);
const cut = (body: string, connection: 'close' | 'keep-alive'): Reply => ({
  raw: `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: ${connection}\r\n\r\n${body.slice(0, 10)}`,
});

describe('a body cut short when the connection closes', () => {
  it.each(['close', 'keep-alive'] as const)('connection: %s — a read is asked again and gets the whole answer the second time', async (connection) => {
    const server = await serve();
    let n = 0;
    stand.api.respond(() => (n++ === 0 ? cut(list, connection) : { body: list }));
    const result = await server.call('campaign.list');
    expect(textOf(result)).not.toMatch(/did not follow HTTP/);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('Spring');
    expect(stand.api.requests).toHaveLength(2);
  });

  it.each(['close', 'keep-alive'] as const)('connection: %s — told as a connection that broke while the API was answering', async (connection) => {
    const server = await serve();
    stand.api.respond(() => cut(list, connection));
    const result = await server.call('campaign.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/The connection broke while the API was answering/);
    expect(textOf(result)).not.toMatch(/did not follow HTTP/);
  });

  it.each(['close', 'keep-alive'] as const)('connection: %s — a write is sent once, its outcome unknown', async (connection) => {
    const server = await serve();
    stand.api.respond(() => cut(good, connection));
    const result = await server.call('campaign.send', { id: 'c1' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/The connection broke while the API was answering/);
    expect(textOf(result)).toMatch(/The outcome is unknown: campaign\.send may have been carried out, so it was not repeated/);
    expect(stand.api.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
  });
});

describe('a 304 that declares the length of the answer it stands for (RFC 9110 allows it)', () => {
  it('is told as a 304 to a request that was not conditional, not as an answer that broke HTTP/1.1', async () => {
    const server = await serve();
    stand.api.respond(() => ({ raw: `HTTP/1.1 304 Not Modified\r\ncontent-length: ${list.length}\r\nconnection: close\r\n\r\n` }));
    const result = await server.call('campaign.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/The API answered HTTP 304 Not Modified to a request that was not conditional/);
    expect(textOf(result)).not.toMatch(/did not follow HTTP|redirect|broke/);
    expect(stand.api.requests).toHaveLength(1);
  });
});
