// Review 35 (the model's eye). "Revoke the API key we leaked yesterday", "rotate the webhook
// secret", "schedule the campaign": no tool has these. The answer to such an operationId was "use
// one of …" and nothing more, and the model tried name after name. Now, where no near miss points
// to an operation, it is told the tools' lists are all there is, and to tell the user.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';

let sandbox: Sandbox;
let contact: InProcess;
let tenant: InProcess;
beforeAll(async () => {
  sandbox = await startSandbox();
  contact = await inProcess(DOMAINS.contact!, sandbox);
  tenant = await inProcess(DOMAINS.tenant!, sandbox);
});
afterAll(async () => {
  await Promise.all([contact, tenant].map((server) => server?.close()));
  await sandbox?.close();
});

describe('review35: an operation no tool has', () => {
  it.each([
    ['tenant_get', 'tenant.apikey.revoke'],
    ['tenant_list', 'tenant.webhook.rotate'],
  ])('%s %s: the model is told the lists are all there is, and to tell the user', async (name, operationId) => {
    const result = (await tenant.client.callTool({ name, arguments: { operationId } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /Every operation this server has is in its tools' lists: if none of them does what the user asked, tell the user it cannot be done here rather than trying other names\. Nothing was sent\.$/,
    );
  });

  it('a near miss is pointed to its operation instead', async () => {
    const result = (await contact.client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.lists' } })) as CallToolResult;
    expect(textOf(result)).toMatch(/Did you mean contact\.list\?/);
    expect(textOf(result)).not.toMatch(/cannot be done here/);
  });
});
