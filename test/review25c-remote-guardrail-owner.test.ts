// Review 25c: a guardrail's refusal tells the model who can change the limit. Attacked: remote
// mode with ENGAGE_CAP_RECIPIENTS_PER_SEND and ENGAGE_CAP_MESSAGES_PER_DAY set by the service's
// operator, a tenant's key sending over /mcp. Found: the refusal said "the tenant owner raises it by
// changing ENGAGE_CAP_MESSAGES_PER_DAY in the server's environment (the env block of the MCP
// configuration) and restarting it": a connector has no such block, and the tenant cannot restart
// the service. Now remote mode's refusal says the service's operator sets it, for every tenant.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, expect, it } from 'vitest';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { makeClient, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox | undefined;
let service: Service | undefined;
afterEach(async () => {
  await service?.close();
  await sandbox?.close();
});

async function refusal(env: Record<string, string>): Promise<string> {
  sandbox = await startSandbox();
  service = await startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_CONFIRM: 'none', ...env },
    catalogs: CATALOGS,
    port: 0,
    writeLog: () => undefined,
  });
  const client = makeClient({ kind: 'v1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', service.url), { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } }),
  );
  try {
    const sent = await client.callTool({
      name: 'channel_action',
      arguments: { operationId: 'channel.whatsapp.send', params: { msisdn: '6281277772501', message: 'Halo' } },
    });
    expect(structuredOf(sent).outcome, textOf(sent)).toBe('refused');
    return textOf(sent);
  } finally {
    await client.close();
  }
}

it.each([
  ['ENGAGE_CAP_RECIPIENTS_PER_SEND', { ENGAGE_CAP_RECIPIENTS_PER_SEND: '0' }],
  ['ENGAGE_CAP_MESSAGES_PER_DAY', { ENGAGE_CAP_MESSAGES_PER_DAY: '0' }],
])('review25c: remote mode, %s refused: the next step is the service operator, not an MCP configuration', async (name, env) => {
  const text = await refusal(env);
  expect(text).toContain(`Refused by a guardrail`);
  expect(text).toContain(name);
  expect(text).not.toMatch(/env block of the MCP configuration/);
  expect(text).toMatch(/operator/);
});
