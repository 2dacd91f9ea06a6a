// Review 30: a hostile 2025 client stalls the whole remote service for every tenant. The service's
// log took a URL's password out of each message (log.ts redactUrlPasswords) before the message was
// cut, with an expression that restarts at every word boundary: a message of `a.a.a.…` took time in
// the square of its length (40 KB: 0.4 s; 2 MB: about a quarter of an hour). A client writes such a
// message: asked to confirm a write (elicitation/create), it answers with a JSON-RPC error whose
// message is 2 MB of `a.`, and the service logs "confirmation request … got no answer that could
// be read: <that message>". Attacked through the built service: its one event loop stopped, and no
// tenant's call was answered. Now the password is found from each `://` (linear), and the call is
// answered a no while another tenant's read goes on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { createJsonLog } from '../packages/http/src/log.js';
import { makeClient, structuredOf, textOf, type TestClient } from './helpers.js';
import { launchService, modernClient, stopService, type ServiceProcess } from './service-process.js';

const HOSTILE_MESSAGE = 'a.'.repeat(1_000_000);

let sandbox: Sandbox;
let service: ServiceProcess;
let url: string;
const open: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  service = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl });
  url = await service.url;
}, 30_000);
afterAll(async () => {
  await Promise.allSettled(open.splice(0).map((client) => client.close()));
  if (service) await stopService(service.child, 'SIGKILL');
  await sandbox?.close();
});

async function hostileClient(): Promise<TestClient> {
  const client = makeClient({
    kind: 'v1',
    elicit: () => {
      throw new Error(HOSTILE_MESSAGE);
    },
  });
  await client.connect(new V1HttpTransport(new URL('/mcp/contact', url), { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } }));
  open.push(client);
  return client;
}

describe('a long hostile message in the service log', () => {
  it("a client's 2 MB error answer to the question is a no, and another tenant is still served", { timeout: 60_000 }, async () => {
    const hostile = await hostileClient();
    const other = await modernClient(url, sandbox.keys.otherTenant, { domain: 'contact' });
    open.push(other);
    const contact = sandbox.tenant('A').contacts[0]!._id;
    const [write, read] = await Promise.all([
      hostile.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', params: { id: contact } } }),
      // Sent once the question is out: the log line of its answer is what stalled the service.
      new Promise((resolve) => setTimeout(resolve, 200)).then(
        () => other.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', limit: 1 } }) as Promise<{ isError?: boolean }>,
      ),
    ]);
    expect(structuredOf(write).outcome, textOf(write)).toBe('declined');
    expect(read.isError).toBeFalsy();
    expect(sandbox.carriedOut().filter((entry) => entry.operationId === 'contact.delete')).toHaveLength(0);
    expect(service.stderr.join('')).toMatch(/got no answer that could be read/);
  });
});

describe('the JSON log', () => {
  it('still takes the password out of a URL, wherever it stands, and leaves text without one', () => {
    const lines: string[] = [];
    const log = createJsonLog({ writeLine: (line) => void lines.push(line) });
    log.warn('redis at rediss://user:s3cret@host:6380 and http://:other@h/x, not mailto:a@b');
    log.warn(`ftp://u:p@h ${'a.'.repeat(20_000)}`);
    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages[0]).toBe('redis at rediss://user:[redacted]@host:6380 and http://:[redacted]@h/x, not mailto:a@b');
    expect(messages[1]).not.toContain(':p@');
  });
});
