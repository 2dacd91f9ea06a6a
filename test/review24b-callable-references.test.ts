// Review 24b, attacked: a server whose ENGAGE_OPERATIONS_ALLOW leaves out the reads its answers
// name. campaign.send allowed, campaign.progress not: a send whose answer was lost was answered
// "… check with campaign.progress before trying again", and the model, calling it, was told
// "operationId campaign.progress is not available: it is excluded by ENGAGE_OPERATIONS_ALLOW".
// Likewise a 404 said "Use contact.list to find valid ids" with contact.list denied. The catalog a
// server runs is now the one it offers: a reference to an operation it does not offer is dropped,
// and the answers say what they say without one.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';
import { modernClient } from './service-process.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => {
  sandbox = started;
});

/** Every operation id this answer tells the model to use ("check with X", "Use X to find"). */
const named = (text: string) =>
  [...text.matchAll(/(?:check with|Check with|Use|see the result with|See the result with) ([a-z]+(?:\.[a-zA-Z]+)+)/g)].map((match) => match[1]);

it('an unknown outcome does not tell the model to check with an operation the allow list left out', async () => {
  const campaign = sandbox.tenant('A').campaigns.find((entry) => entry.status === 'draft');
  expect(campaign).toBeDefined();
  const server = await serve('campaign.send', { env: { ENGAGE_OPERATIONS_ALLOW: 'campaign.send,campaign.list', ENGAGE_CONFIRM: 'none' } });
  sandbox.injectFault({ kind: 'reset-after', operationId: 'campaign.send' });
  const lost = await server.call('campaign.send', { id: campaign!._id });
  expect(structuredOf(lost).outcome).toBe('unknown');
  expect(textOf(lost)).not.toMatch(/campaign\.progress/);
  expect(textOf(lost)).toMatch(/check the current state/);
  // Whatever it does name, the model can call here.
  for (const id of named(textOf(lost))) expect(textOf(await server.call(id!, undefined))).not.toMatch(/is not available/);
});

it('a 404 does not tell the model to find ids with an operation the deny list left out', async () => {
  const server = await serve('contact.delete', { env: { ENGAGE_OPERATIONS_DENY: 'contact.list', ENGAGE_CONFIRM: 'none' } });
  const missing = await server.call('contact.delete', { id: 'no-such-contact-24b' });
  expect(textOf(missing)).toMatch(/Not found \(HTTP 404\)/);
  expect(textOf(missing)).not.toMatch(/contact\.list/);
});

it('with the operation offered, the answer still names it', async () => {
  const server = await serve('contact.delete', { env: { ENGAGE_CONFIRM: 'none' } });
  const missing = await server.call('contact.delete', { id: 'no-such-contact-24b' });
  expect(textOf(missing)).toMatch(/Use contact\.list to find valid ids/);
});

// Remote mode serves every domain with the same settings: another domain's operation they leave
// out is not callable on this service either, so it is not named.
describe('remote mode', () => {
  let remote: Sandbox;
  let service: Service;
  beforeAll(async () => {
    remote = await startSandbox();
    service = await startService({
      env: { ENGAGE_BASE_URL: remote.baseUrl, ENGAGE_CONFIRM: 'none', ENGAGE_OPERATIONS_ALLOW: 'contact.*' },
      catalogs: CATALOGS,
      port: 0,
      writeLog: () => undefined,
    });
  });
  afterAll(async () => {
    await service?.close();
    await remote?.close();
  });

  it("a 404 of contact.byCampaign does not name campaign.list when the service's settings leave it out", async () => {
    const client = await modernClient(service.url, remote.keys.full, { domain: 'contact' });
    try {
      const missing = (await client.callTool({
        name: 'contact_read',
        arguments: { operationId: 'contact.byCampaign', params: { campaignID: 'no-such-campaign-24b' } },
      })) as CallToolResult;
      expect(textOf(missing)).toMatch(/Not found \(HTTP 404\)/);
      expect(textOf(missing)).not.toMatch(/campaign\.list/);
      // Nor could the model call it on this service: its campaign endpoint offers no campaign.list.
      const campaign = await modernClient(service.url, remote.keys.full, { domain: 'campaign' });
      const offered = (await campaign.listTools()).tools.map((tool) => JSON.stringify(tool.inputSchema));
      await campaign.close();
      expect(offered.join('\n')).not.toMatch(/campaign\.list/);
    } finally {
      await client.close();
    }
  });
});
