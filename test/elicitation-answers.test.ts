// A 2025 host that answers elicitation/create with something that is not an elicitation result:
// the call is answered at once (not after the elicitation timeout) with a no, as design.md fixes it
// ("a question ... that came back malformed, is a no, answered at once"): nothing runs, no token is
// offered, and a later call asks again. Only a host that answers method-not-found (it cannot ask
// after all) gets the preview, whose token then counts. Counted on the sandbox's record, never on
// what the server says.
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService } from '../packages/http/src/service.js';
import { serverEntry, type Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, makeClient, structuredOf, textOf, type TestClient } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));
const clients: TestClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** Far below the SDK's 60 s request timeout and our 10-minute elicitation timeout: a call held for either fails here. */
const PROMPTLY = { timeout: 15_000 };
const target = () => ({ id: sandbox.tenant('A').contacts[0]!._id });

const deleteCall = (client: TestClient, extra: Record<string, unknown> = {}) =>
  client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', params: target(), ...extra } }, undefined, PROMPTLY);

/** The malformed answer is a no, at once: nothing ran, no token to run it with. */
async function expectNoAtOnce(client: TestClient) {
  const first = await deleteCall(client);
  expect(structuredOf(first).outcome, textOf(first)).toBe('declined');
  expect(structuredOf(first).confirmationToken).toBeUndefined();
  expect(textOf(first)).toMatch(/answer to the confirmation question could not be read[\s\S]*counts as a no: contact\.delete was not run/);
  // No token was involved on this path: the way on is the same call, asked again.
  expect(textOf(first)).toMatch(/call again with the same operationId and params: they are asked again\.$/);
  expect(countCarriedOut(sandbox, 'contact.delete')).toBe(0);
}

describe.each([
  ['result: null', null],
  ['result: "yes"', 'yes'],
  ['result: true', true],
  ['a result with no action', {}],
  ['a result with content but no action', { content: { confirm: true } }],
])('an elicitation answer that is %s', (_name, answer) => {
  it('answers the call at once with a no; nothing ran, and no token was offered', async () => {
    const server = await serve('contact.delete', { kind: 'v1', elicitRaw: () => answer });
    await expectNoAtOnce(server.client);
    expect(server.logs.join('\n')).toMatch(/confirmation request for contact\.delete got no answer that could be read, taken as a no/);
  });
});

it('the built stdio server answers at once when a host answers elicitation/create with result: null', async () => {
  const client = makeClient({ kind: 'v1', elicitRaw: () => null });
  clients.push(client);
  const env = { PATH: process.env.PATH ?? '', ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full };
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [serverEntry('contact')], env, stderr: 'pipe' }));
  await expectNoAtOnce(client);
});

it('remote mode: a 2025 session whose host answers elicitation/create with result: null is answered at once', async () => {
  const service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => undefined });
  try {
    const client = makeClient({ kind: 'v1', elicitRaw: () => null });
    clients.push(client);
    const headers = { authorization: `Bearer ${sandbox.keys.full}` };
    await client.connect(new V1HttpTransport(new URL('/mcp/contact', service.url), { requestInit: { headers } }));
    await expectNoAtOnce(client);
  } finally {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await service.close();
  }
});

describe('a host that declared elicitation but answers elicitation/create with method-not-found', () => {
  it.each(['v1', 'v2-legacy'] as const)('%s: gets the preview, and its token runs the write once (no loop of questions)', async (kind) => {
    const server = await serve('contact.delete', { kind, elicitUnsupported: true });
    const first = await deleteCall(server.client);
    expect(structuredOf(first).outcome, textOf(first)).toBe('preview');
    expect(textOf(first)).toMatch(/The confirmation question could not be shown: this host cannot ask it\.[\s\S]*contact\.delete has NOT been run/);
    expect(countCarriedOut(sandbox, 'contact.delete')).toBe(0);
    const second = await deleteCall(server.client, { confirmationToken: structuredOf(first).confirmationToken });
    expect(structuredOf(second).outcome, textOf(second)).toBe('done');
    expect(countCarriedOut(sandbox, 'contact.delete')).toBe(1);
  });
});
