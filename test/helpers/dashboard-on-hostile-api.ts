// The campaign dashboard for one test file: the built campaign server on a hostile API (whose
// answers each test sets), Debian's Chromium, and the views it showed, closed after each test once
// checked to have made no network request of their own.
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser, showToolCall, type CallToolResult, type HostedView } from '../../packages/apps/host/harness.js';
import { launchServer, type LaunchedServer } from '../../packages/sandbox/src/index.js';
import { startHostileApi, type HostileApi } from '../hostile-api.js';
import { started } from './started.js';

export interface DashboardFile {
  readonly api: HostileApi;
  /** campaign_read called with `args`, its result shown in the dashboard. */
  show(args: Record<string, unknown>, options?: { width?: number }): Promise<HostedView & { result: CallToolResult }>;
}

export function dashboardOnHostileApi(): DashboardFile {
  let api: HostileApi | undefined;
  let server: LaunchedServer | undefined;
  let browser: Browser | undefined;
  const hosted: HostedView[] = [];
  beforeAll(async () => {
    api = await startHostileApi();
    [server, browser] = await Promise.all([launchServer('campaign', { ENGAGE_BASE_URL: api.baseUrl, ENGAGE_API_KEY: api.key }), launchBrowser()]);
  }, 60_000);
  afterEach(async () => {
    for (const view of hosted) expect(view.networkRequests).toEqual([]);
    await Promise.all(hosted.splice(0).map((view) => view.close()));
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await api?.close();
  });
  return {
    get api() {
      return started(api, 'hostile API');
    },
    async show(args, options = {}) {
      const view = await showToolCall(started(browser, 'browser'), started(server, 'server').client as never, 'campaign_read', args, options);
      hosted.push(view);
      return view;
    },
  };
}
