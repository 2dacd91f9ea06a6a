// Review 30 (call path): ENGAGE_CONFIRM's patterns, where one operation is named both ways. An
// owner who writes `all,-campaign.*,campaign.send` ("no questions for the campaign operations, but
// ask before sending one") had campaign.send run at the model's word: the `-` pattern was read
// first and won, so the explicit campaign.send was silently dropped, and the instructions the
// model reads said nothing of it. Now an operation's own name decides over a wildcard, either way,
// and an operation named both ways otherwise (two wildcards, or its name twice) is asked about.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';
import { needsConfirmation } from '../shared/src/call/confirmations.js';
import { countCarriedOut, structuredOf, textOf, toolOf } from './helpers.js';

let sandbox: Sandbox;
const launched: LaunchedServer[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
});

afterAll(async () => {
  await Promise.all(launched.map((server) => server.close()));
  await sandbox.close();
});

async function campaignServer(confirm: string): Promise<LaunchedServer> {
  const server = await launchServer('campaign', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_CONFIRM: confirm });
  launched.push(server);
  return server;
}

function call(server: LaunchedServer, operationId: string, params: Record<string, unknown>): Promise<CallToolResult> {
  return server.client.callTool({ name: toolOf(operationId), arguments: { operationId, params } }) as Promise<CallToolResult>;
}

describe('an operation named in ENGAGE_CONFIRM and also matched by a pattern with -', () => {
  it('all,-campaign.*,campaign.send: campaign.send is previewed, not sent; the other campaign writes run', async () => {
    const server = await campaignServer('all,-campaign.*,campaign.send');
    const draft = sandbox.tenant('A').campaigns.find((item) => item.status === 'draft')!;
    const before = countCarriedOut(sandbox, 'campaign.send');
    const send = await call(server, 'campaign.send', { id: draft._id });
    expect(structuredOf(send).outcome, textOf(send)).toBe('preview');
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before);
    expect(server.client.getInstructions()).toMatch(/ campaign\.send need the user's yes/);
    const create = await call(server, 'campaign.create', { name: 'Patterns', message: 'Halo', channel: 'whatsapp' });
    expect(structuredOf(create).outcome, textOf(create)).toBe('done');
  });

  it('its own name decides over a wildcard, either way; named both ways otherwise, it asks', () => {
    const policy = (confirm: 'all' | 'none' | 'destructive', gate: string[], skip: string[]) => ({ confirm, confirmPatterns: { gate, skip } });
    const send = { id: 'campaign.send', risk: 'destructive' as const };
    const create = { id: 'campaign.create', risk: 'confirm' as const };
    expect(needsConfirmation(policy('all', ['campaign.send'], ['campaign.*']), send)).toBe(true);
    expect(needsConfirmation(policy('all', ['campaign.send'], ['campaign.*']), create)).toBe(false);
    // The other way round: every campaign operation asks but creating a draft.
    expect(needsConfirmation(policy('none', ['campaign.*'], ['campaign.create']), create)).toBe(false);
    expect(needsConfirmation(policy('none', ['campaign.*'], ['campaign.create']), send)).toBe(true);
    // Two wildcards, or its name both ways: it asks.
    expect(needsConfirmation(policy('none', ['*.send'], ['campaign.*']), send)).toBe(true);
    expect(needsConfirmation(policy('none', ['campaign.*'], ['*.send']), send)).toBe(true);
    expect(needsConfirmation(policy('none', ['campaign.send'], ['campaign.send']), send)).toBe(true);
    // One way only, as before.
    expect(needsConfirmation(policy('all', [], ['campaign.*']), send)).toBe(false);
    expect(needsConfirmation(policy('none', ['campaign.send'], []), send)).toBe(true);
  });
});
