// MCP Apps on the server side: which tool names which view, the views as ui:// resources, and
// that a host without MCP Apps gets the same answers as before. The views themselves run in a
// real browser in apps.browser.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import { VIEWS } from '@engage-mcp/apps/views';
import { defineDomain, manifestOf, pathId } from '@engage-mcp/shared';
import { z } from 'zod';
import { CONFIRMATION_VIEW, viewOf } from '../shared/src/mcp/apps.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CLIENT_KINDS, DOMAINS, inProcess, structuredOf, type InProcess, type InProcessOptions } from './helpers.js';

const uriOf = (name: string) => VIEWS.find((view) => view.name === name)!.uri;
const DASHBOARD = uriOf('campaign-dashboard');
const CARD = uriOf(CONFIRMATION_VIEW);

let sandbox: Sandbox;
const open: InProcess[] = [];
beforeAll(async () => {
  sandbox = await startSandbox({ sendStepMs: 60_000 });
});
afterAll(async () => {
  await Promise.all(open.map((server) => server.close()));
  await sandbox.close();
});

async function serve(domain: string, options: InProcessOptions = {}): Promise<InProcess> {
  const server = await inProcess(DOMAINS[domain]!, sandbox, options);
  open.push(server);
  return server;
}

async function viewsByTool(server: InProcess): Promise<Record<string, unknown>> {
  const { tools } = await server.client.listTools();
  return Object.fromEntries(tools.map((tool) => [tool.name, tool._meta?.ui?.resourceUri]));
}

describe('which view shows which tool', () => {
  it('action tools with a gated operation get the card; campaign_read gets the dashboard its operations name; other reads get none', () => {
    const assigned: Record<string, string | undefined> = {};
    for (const domain of Object.values(DOMAINS)) {
      for (const tool of manifestOf(domain).tools) assigned[tool.name] = viewOf(tool, tool.operations, (op) => op.risk === 'destructive')?.uri;
    }
    expect(assigned).toEqual({
      contact_read: undefined,
      contact_action: CARD,
      campaign_read: DASHBOARD,
      campaign_action: CARD,
      inbox_read: undefined,
      inbox_action: CARD,
      channel_read: undefined,
      channel_action: CARD,
      product_read: undefined,
      product_action: CARD,
      billing_list: undefined,
      billing_get: undefined,
      tenant_list: undefined,
      tenant_get: undefined,
    });
  });

  it('an action tool with nothing gated (ENGAGE_CONFIRM=none) gets no card', () => {
    const tool = manifestOf(DOMAINS.campaign!).tools.find((candidate) => candidate.kind === 'action')!;
    expect(viewOf(tool, tool.operations, () => false)).toBeUndefined();
  });

  it('a catalog naming a view that does not exist, or two views for one tool, is refused', () => {
    const op = (id: string, view: string) => ({
      id,
      method: 'GET' as const,
      path: `/x/${id}`,
      scope: 's',
      risk: 'safe' as const,
      summary: id,
      params: z.strictObject({}),
      view,
    });
    expect(() => defineDomain('demo', 'Demo', [op('demo.a', 'campaign-dashboard'), op('demo.b', 'other-view')])).toThrow(/name different views/);
    const lonely = manifestOf(defineDomain('demo', 'Demo', [op('demo.a', 'no-such-view')])).tools[0]!;
    expect(() => viewOf(lonely, lonely.operations, () => false)).toThrow(/no-such-view/);
    const action = {
      id: 'demo.send',
      method: 'POST' as const,
      path: '/x/{id}',
      scope: 's',
      risk: 'destructive' as const,
      summary: 'send',
      params: z.strictObject({ id: pathId('id') }),
      confirmation: { effect: () => 'send' },
      view: 'campaign-dashboard',
    };
    expect(() => defineDomain('demo', 'Demo', [action])).toThrow(/confirmation card/);
  });
});

describe.each(CLIENT_KINDS)('the views as ui:// resources (%s client)', (kind) => {
  it('tools/list names the view in _meta.ui.resourceUri, and resources/read serves it as MCP Apps HTML', async () => {
    const campaign = await serve('campaign', { kind });
    expect(await viewsByTool(campaign)).toEqual({ campaign_read: DASHBOARD, campaign_action: CARD });
    const { resources } = await campaign.client.listResources();
    expect(resources.map((resource) => [resource.uri, resource.mimeType]).sort()).toEqual(
      [
        [CARD, RESOURCE_MIME_TYPE],
        [DASHBOARD, RESOURCE_MIME_TYPE],
      ].sort(),
    );
    for (const uri of [CARD, DASHBOARD]) {
      const { contents } = await campaign.client.readResource({ uri });
      expect(contents).toHaveLength(1);
      const [content] = contents;
      expect(content).toMatchObject({ uri, mimeType: RESOURCE_MIME_TYPE, _meta: { ui: { prefersBorder: false } } });
      expect(content!.text).toMatch(/^<!doctype html>/);
      // Self-contained: nothing in the document points at the network.
      expect(content!.text).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i);
    }
  });
});

describe('what each server offers', () => {
  it('a server registers only the views its tools use; one without any offers no resources at all', async () => {
    const contact = await serve('contact');
    expect((await contact.client.listResources()).resources.map((resource) => resource.uri)).toEqual([CARD]);
    const billing = await serve('billing');
    expect(billing.client.getServerCapabilities()?.resources).toBeUndefined();
    expect(Object.values(await viewsByTool(billing))).toEqual([undefined, undefined]);
  });

  it('read-only mode: no action tool, so no card', async () => {
    const campaign = await serve('campaign', { env: { ENGAGE_READ_ONLY: 'true' } });
    expect(await viewsByTool(campaign)).toEqual({ campaign_read: DASHBOARD });
    expect((await campaign.client.listResources()).resources.map((resource) => resource.uri)).toEqual([DASHBOARD]);
  });

  it('answers carry nothing for the views: a preview has the fields every host gets (notes: it quotes API text)', async () => {
    const campaign = await serve('campaign');
    const draft = sandbox.tenant('A').campaigns.find((candidate) => candidate.status === 'draft')!;
    const result = await campaign.call('campaign.send', { id: draft._id });
    expect(Object.keys(result).sort()).toEqual(['content', 'structuredContent']);
    expect(Object.keys(structuredOf(result)).sort()).toEqual(['confirmationToken', 'expiresAt', 'notes', 'operationId', 'outcome', 'preview']);
  });
});
