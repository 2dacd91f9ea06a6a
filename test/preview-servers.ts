// The built campaign and inbox servers over stdio against one sandbox (sends held a minute a step),
// for the files that attack a preview with names read from the API: a campaign's name on
// campaign.send's card and question, a ticket's customer name on inbox.ticket.reply's.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';

/** The sandbox and the two servers, for one test file (its own hooks): read them in tests. */
export function campaignAndInboxPerFile(): { readonly sandbox: Sandbox; readonly campaign: LaunchedServer; readonly inbox: LaunchedServer } {
  const rig = {} as { sandbox: Sandbox; campaign: LaunchedServer; inbox: LaunchedServer };
  beforeAll(async () => {
    rig.sandbox = await startSandbox({ sendStepMs: 60_000 });
    const env = { ENGAGE_BASE_URL: rig.sandbox.baseUrl, ENGAGE_API_KEY: rig.sandbox.keys.full };
    [rig.campaign, rig.inbox] = await Promise.all([launchServer('campaign', env), launchServer('inbox', env)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([rig.campaign?.close(), rig.inbox?.close()]);
    await rig.sandbox?.close();
  });
  return rig;
}

/** The preview an action call answers (asserted to be one): its statement and its whole text. */
export async function previewOf(server: LaunchedServer, name: string, operationId: string, params: Record<string, unknown>) {
  const result = (await server.client.callTool({ name, arguments: { operationId, params } })) as CallToolResult;
  expect(structuredOf(result).outcome, textOf(result)).toBe('preview');
  return { statement: structuredOf(result).preview as string, text: textOf(result) };
}
