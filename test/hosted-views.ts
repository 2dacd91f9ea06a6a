// The MCP Apps views' browser tests of one file: a sandbox, one built domain server on it and
// Debian's Chromium, started once; the views a test showed are closed after it (by default having
// made no network request: a view loads nothing).
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { Browser } from 'playwright-core';
import { hostView, launchBrowser, type HostedView, type ViewOptions } from '../packages/apps/host/harness.js';
import { launchServer, startSandbox, type DomainName, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';

export interface ViewsReady {
  sandbox: Sandbox;
  server: LaunchedServer;
  browser: Browser;
}

/** Registers the hooks; `ready` is told the sandbox, server and browser. Returns the list a test puts the views it shows in. */
export function viewsPerFile(domain: DomainName, ready: (started: ViewsReady) => void, { expectNoNetwork = true } = {}): HostedView[] {
  const hosted: HostedView[] = [];
  let started: Partial<ViewsReady> = {};
  beforeAll(async () => {
    const sandbox = await startSandbox();
    started = { sandbox };
    const [server, browser] = await Promise.all([
      launchServer(domain, { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full }),
      launchBrowser(),
    ]);
    started = { sandbox, server, browser };
    ready({ sandbox, server, browser });
  }, 60_000);
  afterEach(async () => {
    if (expectNoNetwork) for (const view of hosted) expect(view.networkRequests).toEqual([]);
    await Promise.all(hosted.splice(0).map((view) => view.close()));
  });
  afterAll(async () => {
    await started.browser?.close();
    await started.server?.close();
    await started.sandbox?.close();
  });
  return hosted;
}

/**
 * The confirmation card as a host shows it for campaign_action called with `toolInput` and answered
 * `toolResult` (undefined: no result yet): the card's HTML and the tool read from the server, and the
 * card's own calls sent to it, unless `options` says otherwise.
 */
export async function hostConfirmCard(
  browser: Browser,
  server: LaunchedServer,
  toolInput: Record<string, unknown>,
  toolResult: unknown,
  options: Partial<Omit<ViewOptions, 'html' | 'tool' | 'toolInput' | 'toolResult'>> = {},
): Promise<HostedView> {
  const { tools } = await server.client.listTools();
  const [content] = (await server.client.readResource({ uri: 'ui://engage/confirm' })).contents;
  return hostView(browser, {
    html: (content as { text: string }).text,
    tool: tools.find((tool) => tool.name === 'campaign_action') as never,
    toolInput,
    toolResult,
    callTool: ({ name, arguments: args }) => server.client.callTool({ name, arguments: args }),
    ...options,
  });
}
