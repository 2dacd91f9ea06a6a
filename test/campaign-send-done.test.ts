// campaign.send starts a send the API carries on with after it answers (api-spec: "campaign.send
// starts sending to all recipients"), but its answer read "Done: campaign.send was carried out."
// beside a record saying `status: sending`, and a model told the person the campaign had gone to
// everyone. The answer now says the API has started sending and which read shows how many have
// gone (the catalog's `afterDone`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => sandbox?.close());

describe("campaign.send's Done", () => {
  it('says the API has started sending and names campaign.progress; a write that ends at its answer reads as before', async () => {
    const server = await inProcess(DOMAINS.campaign!, sandbox, { env: { ENGAGE_CONFIRM: 'none' } });
    try {
      const draft = sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
      const sent = await server.call('campaign.send', { id: draft._id });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      expect(textOf(sent)).toMatch(
        /^Done: campaign\.send was carried out\.\nThe API has started sending to the campaign's recipients; campaign\.progress shows how many have gone\.\n/,
      );
      expect(structuredOf(sent).notes).toContain("The API has started sending to the campaign's recipients; campaign.progress shows how many have gone.");
      const created = await server.call('campaign.create', { name: 'Plain', channel: 'email', message: 'Hi' });
      expect(textOf(created)).toMatch(/^Done: campaign\.create was carried out\.\n/);
    } finally {
      await server.close();
    }
  });
});
