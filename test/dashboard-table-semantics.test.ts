// The campaign list is a table: Chromium's accessibility tree (what a screen reader reads, taken
// over the DevTools protocol, not playwright's own guess from the tags) must have a table, its
// column headers and each campaign's row of cells, in a wide frame and in a 320 px one, where
// style.css lays each campaign out as a block of its own.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

interface AxNode {
  role?: { value?: string };
  name?: { value?: string };
  ignored?: boolean;
}

/** The roles and names Chromium gives the view's document (its iframe), as a screen reader gets them. */
async function accessibilityTree(view: HostedView): Promise<Array<{ role: string; name: string }>> {
  // The view's frame is sandboxed into a process of its own: the session is the frame's.
  const session = await view.page.context().newCDPSession(view.frame);
  try {
    const { nodes } = (await session.send('Accessibility.getFullAXTree')) as { nodes: AxNode[] };
    return nodes.filter((node) => !node.ignored).map((node) => ({ role: node.role?.value ?? '', name: node.name?.value ?? '' }));
  } finally {
    await session.detach();
  }
}

describe('the campaign list as a table, for a screen reader', { timeout: 60_000 }, () => {
  for (const width of [560, 320]) {
    it(`${width} px: a table with its column headers, and a row of cells for each campaign`, async () => {
      const names = sandbox.tenant('A').campaigns.map((campaign) => campaign.name);
      const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.list' }, { width });
      hosted.push(view);
      await view.view.getByRole('button', { name: `Show the progress of ${names[0]}` }).waitFor();
      const tree = await accessibilityTree(view);
      const roles = (role: string) => tree.filter((node) => node.role === role);
      expect(roles('table')).toHaveLength(1);
      expect(roles('columnheader').map((node) => node.name)).toEqual(expect.arrayContaining(['Name', 'Channel', 'Status', 'Sent']));
      expect(roles('row').length).toBe(names.length + 1);
      for (const name of names) expect(roles('cell').map((node) => node.name)).toContain(name);
    });
  }
});
