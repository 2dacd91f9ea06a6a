// Large list bodies read as a stream (shared/src/stream-json.ts, stream-list.ts) answer exactly
// as the simple path does (the whole body parsed, then shapeList): on tricky bodies fed in chunks
// of every size, and through the request helper for the envelope, error and size rules.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAnswer } from '../shared/src/call/answers.js';
import type { Operation } from '../shared/src/model/catalog.js';
import { UpstreamError } from '../shared/src/model/errors.js';
import { ApiClient, parseJson } from '../shared/src/upstream/api-client.js';
import { createLogger } from '../shared/src/safe/log.js';
import { keyRedactor, type Redact } from '../shared/src/safe/redact.js';
import { scrubber, type ListShape } from '../shared/src/safe/render.js';
import { EnvelopeScanner } from '../shared/src/upstream/stream-json.js';
import { listBodyReader } from '../shared/src/upstream/stream-list.js';
import { listOutcome, type ListOutcome } from './list-outcome.js';

const records = [
  { _id: 'a1', name: 'Budi [Santoso]', note: 'braces { } and ] brackets [ , commas', tags: ['vip', 'jakarta'] },
  { _id: 'a2', name: 'Siti "the quote" Rahayu', note: 'back\\slash \\" and \\\\ and ends with \\', status: 'open' },
  { _id: 'a3', name: 'Dewi ☕ Kopi 𝒜 é ü 漢字', emoji: '😀👍🏽', status: 'closed', nested: { deep: { deeper: [1, [2, [3, { x: ']' }]]] } } },
  // biome-ignore lint/correctness/noPrecisionLoss: numbers past double precision must read as JSON.parse reads them
  { _id: 'a4', name: 'Agus', count: 12345678901234567890, ratio: 1.5e-7, flag: true, none: null, empty: {}, list: [] },
  { _id: 'a5', name: 'budi kecil', status: 'OPEN', text: 'line\nbreak\ttab \u2028 sep', escaped: '\u005d\u007b' },
  { _id: 'a6', name: 'İbrahim SITI', city: 'KELVIN \u212A', status: 'open' },
  // biome-ignore lint/correctness/noPrecisionLoss: a number past double range too
  { _id: 'a7', name: 'Siti Budi', status: 'open', n: 1e21, big: 1e400 === Infinity ? 'inf' : '' },
  { _id: 'a8', name: 'looks like a boundary: },{"_id":"fake"},{ and "},{" again', inner: [{}, {}], more: [{ a: [{}, { b: '},{' }] }] },
  { _id: 'a9', name: 'after the fake one' },
];

/** Bodies written by hand (escapes kept as written), and from the records above. */
const envelope = (data: string, before = '"status":200,"errorCode":0,', after = '') => `{${before}"data":${data}${after}}`;
const BODIES: Record<string, string> = {
  plain: JSON.stringify({ status: 200, errorCode: 0, data: records }),
  pretty: JSON.stringify({ status: 200, errorCode: 0, data: records }, null, 2).replace(/\n/g, '\r\n\t'),
  escapesAsWritten: envelope(
    '[{"_id":"e1","s":"\\u005d\\u007d\\"\\\\"},{"_id":"e2","s":"\\ud83d\\ude00 \\/ \\b\\f"},"\\\\",["\\"]"],{"_id":"e3","name":"Bu\\u0064i \\u0053iti","status":"\\u006fpen"},{"_id":"e4","name":"budi"}]',
  ),
  numbers: envelope('[{"_id":"n1","v":1e400,"w":12345678901234567890},{"_id":"n2","v":-1E+2,"w":[[{"x":1}]]}]'),
  dataNotFirst: '{"message":"ok [data]","data" : [1, "two", {"three":[3]}, null, true, false, -0.5e3] ,"status":200,"errorCode":0}',
  keysAfterData: envelope('[{"a":1},{"b":[2]}]', undefined, ',"meta":{"data":[9,9]},"extra":"]\\"}","more":[{"data":1}]'),
  emptyData: envelope('[]'),
  emptyDataSpaced: envelope(' [ \n\t ] '),
  escapedKey: '{"status":200,"errorCode":0,"d\\u0061ta":[{"x":1},{"x":2}]}',
  repeatedDataLastWins: '{"data":[1,2,3],"status":200,"errorCode":0,"data":[4]}',
  repeatedDataNull: '{"status":200,"errorCode":0,"data":[1,2,3],"data":null}',
  dataFirstNotArray: '{"status":200,"errorCode":0,"data":{"items":[1,2]}}',
  dataNull: '{"status":200,"errorCode":0,"data":null}',
  arrayRecords: envelope('[[1,[2,[3]]],[],{},"]",0]'),
  // A `},{` inside a string, where a batch is told apart record by record (with and without blanks between records).
  fakeBoundary: envelope('[{"_id":"f1","s":"x},{y budi"},{"_id":"f2","name":"siti"},{"_id":"f3"}]'),
  fakeBoundarySpaced: envelope('[{"_id":"s1","s":"a},{b budi"}, {"_id":"s2","name":"x"},{"_id":"s3","name":"budi"}]'),
  leadingSpace: ` \n ${envelope('[{"x":"y"}]')} \n `,
  // Refusals and failures
  errorEnvelope: '{"status":400,"errorCode":40001,"message":"msisdn is invalid","data":[{"a":1}]}',
  errorEnvelope5xx: '{"status":503,"errorCode":50300,"data":[1,2],"error":"down"}',
  notEnvelope: '{"ok":true,"data":[1,2,3]}',
  statusNotNumber: '{"status":"200","errorCode":0,"data":[1]}',
  topLevelArray: '[{"status":200},{"errorCode":0}]',
  html: '<!DOCTYPE html><html><body><h1>Bad Gateway</h1></body></html>',
  empty: '',
  blank: ' \n\t ',
  doubleComma: envelope('[{"a":1},,{"b":2}]'),
  trailingComma: envelope('[{"a":1},]'),
  leadingComma: envelope('[,{"a":1}]'),
  onlyComma: envelope('[ , ]'),
  badLiteral: envelope('[{"a":tru}]'),
  extraBrace: envelope('[{"a":1}}]'),
  extraBracket: envelope('[{"a":1}]]'),
  missingComma: envelope('[1 2]'),
  unclosedString: envelope('[{"a":"b}]'),
  unclosedArray: '{"status":200,"errorCode":0,"data":[{"a":1}',
  garbageAfter: `${envelope('[1]')}x`,
  twoValues: `${envelope('[1]')}${envelope('[2]')}`,
  badEscape: envelope('[{"a":"\\x"}]'),
  controlChar: envelope('[{"a":"tab\there"}]'),
};

const SHAPES: ListShape[] = [
  {},
  { limit: 2, offset: 1 },
  { search: 'budi' },
  { search: 'status:open' },
  { search: 'é', fields: ['name', 'missing'] },
  { search: ']' },
  { search: '1' },
  { fields: ['toString', 'x'] },
  { search: 'siti budi' },
  { search: 'BUDI status:open', limit: 1 },
  { search: 'k' },
  { search: 'infinity' },
  { search: 'nfin 000' },
  { search: 'x:1' },
  { search: 'w:[object' },
  { search: 'santoso-nowhere' },
];

const simple = (body: string, shape: ListShape, redact?: Redact) => listOutcome(parseJson(body), shape, redact);

function streamed(body: Buffer, chunkSize: number, shape: ListShape, threshold = 0, redact?: Redact): ListOutcome {
  const sink = listBodyReader(shape, '_id', threshold, redact)();
  for (let at = 0; at < body.length; at += chunkSize) sink.write(body.subarray(at, at + chunkSize));
  const end = sink.end();
  return listOutcome('parsed' in end ? end.parsed : parseJson(end.text), shape, redact);
}

describe('streamed list bodies equal the simple path', () => {
  it('has bodies of every kind: a list, an error, not JSON', () => {
    const kinds = new Set(Object.values(BODIES).map((body) => simple(body, {}).kind));
    expect([...kinds].sort()).toEqual(['error', 'list', 'not-envelope', 'not-json', 'other']);
    expect(simple(BODIES.plain as string, {})).toMatchObject({ kind: 'list', shaped: { page: { total: 9 } } });
  });

  for (const [name, body] of Object.entries(BODIES)) {
    it(`${name}: every chunk size, every shape`, () => {
      const bytes = Buffer.from(body, 'utf8');
      for (const shape of SHAPES) {
        const expected = simple(body, shape);
        for (let size = 1; size <= Math.max(1, bytes.length); size++) {
          const got = streamed(bytes, size, shape);
          if (JSON.stringify(got) !== JSON.stringify(expected)) expect({ name, shape, size, got }).toEqual({ name, shape, size, got: expected });
        }
        // And with a threshold in the middle of the body: buffered first, then streamed.
        expect(streamed(bytes, 3, shape, Math.floor(bytes.length / 2))).toEqual(expected);
      }
    });
  }

  it("with the caller's redactor, search and projection never match the key, streamed or not", () => {
    const key = 'eng_live_0f1e2d3c4b5a69788796a5b4c3d2e1f0';
    const redact = keyRedactor([key]);
    const data = [
      ...records,
      { _id: 'k1', note: `token=${key}`, secret: key, [key]: 1, list: [`x${key}`] },
      { _id: 'k2', note: `token=${[...key].join('\u200b')} budi`, hex: Buffer.from(key).toString('hex') },
      { _id: 'k3', note: 'token= budi', secret: 'plain' },
    ];
    const body = JSON.stringify({ status: 200, errorCode: 0, data });
    const shapes: ListShape[] = [
      { search: key.slice(9, 12) },
      { search: `token=${key.slice(0, 10)}` },
      { search: key.slice(12, 16) },
      { search: `secret:${key}` },
      { search: `${key}:1` },
      { search: 'token= budi' },
      { search: '[redacted]' },
      { search: 'redacted' },
      { search: '2d3c4b' },
      { fields: [key, 'note', key.slice(0, 12)] },
    ];
    for (const shape of shapes) {
      const expected = simple(body, shape, redact);
      for (const size of [1, 7, 64, 1000])
        expect({ shape, size, got: streamed(Buffer.from(body), size, shape, 0, redact) }).toEqual({ shape, size, got: expected });
    }
    const matched = (search: string) => (simple(body, { search }, redact) as { shaped: { page: { matched: number } } }).shaped.page.matched;
    // The public prefix (eng_live_) is no secret; a piece of what follows it never matches.
    expect([key.slice(9, 12), `token=${key.slice(0, 10)}`, key.slice(12, 16), `secret:${key}`, `${key}:1`, '2d3c4b', 'redacted'].map(matched)).toEqual([
      0, 0, 0, 0, 0, 0, 0,
    ]);
    expect(matched('token=')).toBe(3);
    expect(matched('budi')).toBeGreaterThan(3);
  });

  it('a body cut at every byte answers as the simple path does', () => {
    const body = BODIES.keysAfterData as string;
    for (let cut = 0; cut <= body.length; cut++) {
      const piece = body.slice(0, cut);
      expect({ cut, got: streamed(Buffer.from(piece), 5, {}) }).toEqual({ cut, got: simple(piece, {}) });
    }
  });

  it('records keep their exact text: multi-byte characters and surrogate pairs split across chunks', () => {
    const body = Buffer.from(JSON.stringify({ status: 200, errorCode: 0, data: ['😀', '漢字', 'é', { k: '👍🏽' }] }), 'utf8');
    for (let size = 1; size <= body.length; size++) {
      const texts: string[] = [];
      const scanner = new EnvelopeScanner((text) => texts.push(text));
      const decoder = new StringDecoder('utf8');
      for (let at = 0; at < body.length; at += size) scanner.write(decoder.write(body.subarray(at, at + size)));
      scanner.write(decoder.end());
      const result = scanner.end();
      expect(texts).toEqual(['"😀"', '"漢字"', '"é"', '{"k":"👍🏽"}']);
      expect(result).toEqual({ skeleton: '{"status":200,"errorCode":0,"data":null}', streamed: true, dataRepeated: false, broken: false });
    }
  });

  it('a record far larger than a piece (scanned, not batched, while it lasts), among small ones', () => {
    const huge = { _id: 'huge', text: `budi ${'},{"x":"\\\\"'.repeat(60_000)} end`, nested: Array.from({ length: 2_000 }, (_, index) => ({ index })) };
    const data = [...records, huge, ...records.map((record) => ({ ...record, _id: `${record._id}-after` }))];
    const body = Buffer.from(JSON.stringify({ status: 200, errorCode: 0, data }), 'utf8');
    expect(body.length).toBeGreaterThan(1_000_000);
    for (const shape of [{}, { search: 'budi' }, { search: 'end', fields: ['_id'] }, { offset: 8, limit: 3 }]) {
      const expected = simple(body.toString('utf8'), shape);
      for (const size of [65_536, 16_384, 100_003]) expect(streamed(body, size, shape)).toEqual(expected);
    }
  });

  it('generated records with every kind of escape, in random chunks, match', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const alphabet = ['a', 'B', '"', '\\', '[', ']', '{', '}', ',', ':', ' ', '\n', 'é', '😀', '\u2028', '\u0000', 'budi'];
    const text = (length: number) => Array.from({ length }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
    const data = Array.from({ length: 300 }, (_, index) => ({ _id: `r${index}`, name: text(8), more: [text(3), { inner: text(4) }], n: index }));
    const body = Buffer.from(JSON.stringify({ status: 200, errorCode: 0, data }), 'utf8');
    for (const shape of [{}, { search: 'budi', limit: 500 }, { search: 'ab', offset: 3 }, { limit: 7, offset: 290 }]) {
      const expected = simple(body.toString('utf8'), shape);
      for (let round = 0; round < 20; round++) expect(streamed(body, 1 + Math.floor(rand() * 200), shape)).toEqual(expected);
    }
  });
});

// ---- through the request helper, against a local HTTP server ----

const op = { id: 'contact.list', list: { idField: '_id' }, customerText: true } as unknown as Operation;
let server: Server;
let baseUrl: URL;
/** What the server answers next: status, content type and the body's pieces. */
let answer: { status: number; type: string; pieces: Array<string | Buffer> } = { status: 200, type: 'application/json', pieces: [] };

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(answer.status, { 'content-type': answer.type });
    for (const piece of answer.pieces) res.write(piece);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api`);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function viaClient(shape: ListShape, stream: boolean): Promise<{ result?: unknown; error?: Record<string, unknown>; logs: string[] }> {
  const logs: string[] = [];
  const log = createLogger('test', 'debug', [], (line) => logs.push(line) > 0);
  const client = new ApiClient({ apiKey: 'eng_live_test', baseUrl, authHeader: 'x-api-key', timeoutMs: 20_000, maxRetryWaitSeconds: 1 }, log);
  try {
    const data = await client.request({ method: 'GET', path: '/users', safe: false, ...(stream ? { readBody: listBodyReader(shape, '_id', 0) } : {}) });
    return { result: readAnswer(op, data, shape, { scrub: scrubber(), redact: (text) => text }), logs };
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    return { error: { ...error, kind: error.kind, message: error.message }, logs };
  } finally {
    await client.close();
  }
}

async function same(status: number, body: string | Buffer, shape: ListShape = {}, type = 'application/json') {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  // Sent in uneven pieces, so the stream sees several chunks.
  const pieces: Buffer[] = [];
  for (let at = 0, size = 1; at < bytes.length; at += size, size = (size * 3) % 4099 || 1) pieces.push(bytes.subarray(at, at + size));
  answer = { status, type, pieces };
  const plain = await viaClient(shape, false);
  const streamedAnswer = await viaClient(shape, true);
  expect(streamedAnswer).toEqual(plain);
  return plain;
}

describe('through the request helper: the envelope, error and size rules are unchanged', () => {
  it('a list, with every shape', async () => {
    for (const shape of SHAPES) expect((await same(200, BODIES.plain as string, shape)).result).toBeDefined();
  });

  it('an error envelope (4xx and 5xx inside a 200)', async () => {
    expect((await same(200, BODIES.errorEnvelope as string)).error).toMatchObject({ kind: 'rejected' });
    expect((await same(200, BODIES.errorEnvelope5xx as string)).error).toMatchObject({ kind: 'server' });
  });

  it('not the envelope, not JSON, truncated mid-stream, an HTML page, empty', async () => {
    expect((await same(200, BODIES.notEnvelope as string)).error).toMatchObject({ kind: 'bad-response' });
    expect((await same(200, BODIES.badLiteral as string)).error?.message).toMatch(/not valid JSON/);
    expect((await same(200, (BODIES.plain as string).slice(0, 300))).error?.message).toMatch(/not valid JSON/);
    expect((await same(200, BODIES.html as string, {}, 'text/html')).error?.message).toMatch(/HTML page/);
    expect((await same(200, '')).error?.message).toMatch(/empty/);
    // The log line quotes the body's beginning, the same either way.
    const logged = await same(200, `${envelope('[{"a":1},,')}${'x'.repeat(100_000)}`);
    expect(logged.logs.join('\n')).toMatch(/not JSON: \{"status":200/);
  });

  it('4xx and 5xx bodies are read whole, as before', async () => {
    expect((await same(404, '{"status":404,"errorCode":40400,"message":"no such list","data":[]}')).error).toMatchObject({ kind: 'not-found' });
    const failed = await same(500, `<html>${'y'.repeat(5000)}</html>`, {}, 'text/html');
    expect(failed.error).toMatchObject({ kind: 'server' });
  });

  it('a large list whose records are malformed far into the body', async () => {
    const data = Array.from({ length: 30_000 }, (_, index) => ({ _id: `id${index}`, name: `Budi ${index}` }));
    const good = JSON.stringify({ status: 200, errorCode: 0, data });
    expect((await same(200, good, { search: 'budi 2999', limit: 5 })).result).toBeDefined();
    const bad = good.replace('"id29000"', 'id29000');
    expect((await same(200, bad, { limit: 5 })).error?.message).toMatch(/not valid JSON/);
  });

  it('a body over the size limit is refused, streamed or not', async () => {
    const record = Buffer.from(`{"_id":"x","name":"${'z'.repeat(1000)}"},`);
    const pieces: Buffer[] = [Buffer.from('{"status":200,"errorCode":0,"data":[')];
    for (let size = 0; size <= 65 * 1024 * 1024; size += record.length) pieces.push(record);
    answer = { status: 200, type: 'application/json', pieces };
    const plain = await viaClient({}, false);
    const streamedAnswer = await viaClient({}, true);
    expect(plain.error).toMatchObject({ kind: 'bad-response' });
    expect(plain.error?.message).toMatch(/larger than 64 MiB/);
    expect(streamedAnswer).toEqual(plain);
  });
});
