// A write's preview reads what it names (a campaign's audience, a contact) with the caller's key.
// A key the API refuses (401: revoked, expired) made that read fail as any other would: the preview
// said the details "could not be read now" and still offered a confirmationToken, for a write the
// API would refuse the same way once the person said yes. Noticed by review32-answers. Now a
// refused key ends the call at once with what it is (the key is the user's to replace), no token
// and nothing sent. Through the built campaign server over stdio, as a host runs it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { launchServer, type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => sandbox?.close());

it.each(['revoked', 'expired'] as const)('a %s key gets the refusal, not a preview with a token', async (which) => {
  const server = await launchServer('campaign', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys[which] });
  try {
    const campaign = sandbox.tenant('A').campaigns[0]!._id;
    const result = (await server.client.callTool({
      name: 'campaign_action',
      arguments: { operationId: 'campaign.send', params: { id: campaign } },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('The API refused the key (HTTP 401)');
    expect(textOf(result)).not.toMatch(/confirmationToken "/);
    expect(structuredOf(result)).not.toHaveProperty('confirmationToken');
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(0);
  } finally {
    await server.close();
  }
});
