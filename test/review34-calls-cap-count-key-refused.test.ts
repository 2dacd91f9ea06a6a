// Review 34 (calls), attacking 976f686 (a preview's look-up answered 401 ends the call with the
// key's refusal). Attacked: a write that needs no yes (ENGAGE_CONFIRM=none) under a send cap, whose
// message count is read from the API at the claim, with a revoked or expired key. Found: the count's
// look-up met the 401 as any failure, and the call was refused "how many messages … could not be
// read … Try again in a moment": a model tries again, and again, and the user never hears the key is
// refused. Through the built campaign server over stdio. claimGuardrails now throws the reader's
// keyRefused when the count could not be read.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchServer, type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, textOf } from './helpers.js';

let sandbox: Sandbox;
const dir = mkdtempSync(join(tmpdir(), 'review34-cap-count-'));
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

it.each(['revoked', 'expired'] as const)('a %s key under a send cap gets the key refusal, not "try again in a moment"', async (which) => {
  const server = await launchServer('campaign', {
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_API_KEY: sandbox.keys[which],
    ENGAGE_CONFIRM: 'none',
    ENGAGE_CAP_RECIPIENTS_PER_SEND: '100000',
    ENGAGE_STATE_DIR: join(dir, which),
  });
  try {
    const campaign = sandbox.tenant('A').campaigns[0]!._id;
    const result = (await server.client.callTool({
      name: 'campaign_action',
      arguments: { operationId: 'campaign.send', params: { id: campaign } },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('The API refused the key (HTTP 401)');
    expect(textOf(result)).not.toContain('Try again in a moment');
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(0);
  } finally {
    await server.close();
  }
});
