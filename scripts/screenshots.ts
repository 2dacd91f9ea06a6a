// `npm run screenshots`: pictures of the MCP Apps views for the README (docs/apps-*.png), in the
// light and the dark theme, rendered the way the browser tests render them: the built campaign
// server over stdio against the sandbox, each view in the test host in headless Chromium.
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { launchBrowser, showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import { launchServer, startSandbox } from '../packages/sandbox/src/index.js';

const DOCS = fileURLToPath(new URL('../docs/', import.meta.url));
const THEMES = ['light', 'dark'] as const;
const MARGIN = 12;

// Slow batches, so the dashboard can be caught half-way through sending.
const sandbox = await startSandbox({ sendStepMs: 2_500 });
const server = await launchServer('campaign', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full });
const browser = await launchBrowser();
const client = server.client as never;
await mkdir(DOCS, { recursive: true });

/** The view and a margin of the host page around it. */
async function capture(view: HostedView, name: string): Promise<void> {
  await view.page.waitForTimeout(300); // the view's last size-changed notification
  const box = (await view.page.locator('#view-frame').boundingBox())!;
  const path = `${DOCS}${name}.png`;
  await view.page.screenshot({ path, clip: { x: box.x - MARGIN, y: box.y - MARGIN, width: box.width + 2 * MARGIN, height: box.height + 2 * MARGIN } });
  process.stderr.write(`wrote ${path}\n`);
  await view.close();
}

try {
  const draft = sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
  for (const theme of THEMES) {
    // The card for campaign.send, as the model's first call gets it: a preview and two buttons.
    const card = await showToolCall(browser, client, 'campaign_action', { operationId: 'campaign.send', params: { id: draft._id } }, { theme });
    await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
    await capture(card, `apps-confirm-card-${theme}`);
  }

  // Another campaign created and sent (as after the person's yes), shown half-way in both themes.
  const created = (await server.client.callTool({
    name: 'campaign_action',
    arguments: { operationId: 'campaign.create', params: { name: 'Promo Lebaran', message: 'Diskon 20% untuk semua produk!', channel: 'whatsapp' } },
  })) as { structuredContent?: { data?: { _id?: string } } };
  const id = created.structuredContent?.data?._id;
  const args = { operationId: 'campaign.send', params: { id } };
  const preview = (await server.client.callTool({ name: 'campaign_action', arguments: args })) as { structuredContent?: { confirmationToken?: string } };
  await server.client.callTool({ name: 'campaign_action', arguments: { ...args, confirmationToken: preview.structuredContent?.confirmationToken } });
  const dashboards = await Promise.all(
    THEMES.map((theme) => showToolCall(browser, client, 'campaign_read', { operationId: 'campaign.progress', params: { id } }, { theme })),
  );
  for (const [index, theme] of THEMES.entries()) {
    const dashboard = dashboards[index]!;
    await dashboard.view.locator('#progress-text', { hasText: /^50% sent/ }).waitFor({ timeout: 20_000 });
    await capture(dashboard, `apps-campaign-dashboard-${theme}`);
  }
} finally {
  await browser.close();
  await server.close();
  await sandbox.close();
}
