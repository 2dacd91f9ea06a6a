// A large tenant end to end: the built servers over stdio against a sandbox of 50,040 contacts and
// 20,005 tickets. Their list bodies are past the streaming threshold, so they are read as a
// stream; every answer must equal what the simple path makes of the same list (read whole,
// parsed, shaped by readAnswer, finished by finishAnswer).
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverEntry, startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { finishAnswer, readAnswer } from '../shared/src/call/answers.js';
import { keyRedactor } from '../shared/src/safe/redact.js';
import { scrubber, type ListShape } from '../shared/src/safe/render.js';
import { STREAM_THRESHOLD_BYTES } from '../shared/src/upstream/stream-list.js';
import { DOMAINS, textOf } from './helpers.js';

let sandbox: Sandbox;
const clients: Record<string, Client> = {};

async function connect(domain: 'contact' | 'inbox'): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [serverEntry(domain)],
    env: { PATH: process.env.PATH ?? '', ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'large-lists', version: '0' });
  await client.connect(transport);
  return client;
}

beforeAll(async () => {
  sandbox = await startSandbox({ extraContacts: 50_000, extraTickets: 20_000 });
  clients.contact = await connect('contact');
  clients.inbox = await connect('inbox');
}, 60_000);
afterAll(async () => {
  for (const client of Object.values(clients)) await client.close();
  await sandbox.close();
});

/** The simple path's answer: the whole list read directly, then shaped and finished as the server does. */
async function simpleAnswer(operationId: string, path: string, shape: ListShape) {
  const response = await fetch(`${sandbox.baseUrl}${path}`, { headers: { 'x-api-key': sandbox.keys.full } });
  const text = await response.text();
  const { data } = JSON.parse(text) as { data: unknown[] };
  const op = DOMAINS[operationId.split('.')[0] as string]!.operations.find((candidate) => candidate.id === operationId)!;
  const redact = keyRedactor([sandbox.keys.full]);
  return { bytes: Buffer.byteLength(text), answer: finishAnswer(readAnswer(op, data, shape, { scrub: scrubber(redact), redact }), redact) };
}

const CONTACT_SHAPES: ListShape[] = [
  {},
  { limit: 500 },
  { search: 'budi', limit: 20, offset: 30 },
  { search: 'tags:vip siti', fields: ['name', 'email', 'nothing'] },
  { offset: 50_020 },
  { offset: 60_000 },
  { search: 'no-such-person' },
  { search: '6281', limit: 3 },
];

describe('a large tenant, through the built servers over stdio', () => {
  it('the contact list body is large enough to be streamed', async () => {
    const { bytes } = await simpleAnswer('contact.list', '/api/user/users', {});
    expect(bytes).toBeGreaterThan(4 * STREAM_THRESHOLD_BYTES);
  });

  for (const shape of CONTACT_SHAPES) {
    it(`contact.list ${JSON.stringify(shape)}: page, search and counts as the simple path`, async () => {
      const result = await clients.contact!.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', ...shape } });
      const { answer } = await simpleAnswer('contact.list', '/api/user/users', shape);
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual(answer.structuredContent);
      expect(textOf(result as never)).toBe(textOf(answer as never));
    });
  }

  it('the counts are the whole tenant', async () => {
    const result = await clients.contact!.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', search: 'budi', limit: 1 } });
    const page = (result.structuredContent as { page: { total: number; matched: number } }).page;
    expect(page.total).toBe(50_040);
    expect(page.matched).toBeGreaterThan(1_000);
    expect(page.matched).toBeLessThan(page.total);
  });

  it('inbox.ticket.list over 20,005 tickets: a page, a search and the counts as the simple path', async () => {
    for (const shape of [{ limit: 10 }, { search: 'status:pending whatsapp', offset: 100, limit: 25 }, { fields: ['ticketID', 'status'], offset: 19_990 }]) {
      const result = await clients.inbox!.callTool({ name: 'inbox_read', arguments: { operationId: 'inbox.ticket.list', ...shape } });
      const { answer, bytes } = await simpleAnswer('inbox.ticket.list', '/api/ai/v1/tickets', shape);
      expect(bytes).toBeGreaterThan(STREAM_THRESHOLD_BYTES);
      expect(result.structuredContent).toEqual(answer.structuredContent);
      expect(textOf(result as never)).toBe(textOf(answer as never));
    }
  });

  it('a fault mid-stream still answers as a broken body does', async () => {
    sandbox.injectFault({ kind: 'truncated', operationId: 'contact.list' });
    const result = await clients.contact!.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
    expect(result.isError).toBe(true);
    expect(textOf(result as never)).toMatch(/not valid JSON/);
  });
});
