// Review 41 (calls): the line campaign.send's preview adds when the message quota left is short of
// the campaign's recipients (review40) read '1 messages left' (and '1 recipients' for a campaign of
// one): a count of one is said as one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';

const SHORT = /^- Not enough message quota for every recipient: [^.]*\./m;

describe('review41: the words of a campaign send short of quota', () => {
  let sandbox: Sandbox;
  let server: InProcess;
  beforeAll(async () => {
    sandbox = await startSandbox();
    server = await inProcess(DOMAINS.campaign!, sandbox);
  });
  afterAll(async () => {
    await server?.close();
    await sandbox?.close();
  });

  it('one message left is said as one message', async () => {
    const draft = sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
    const quota = sandbox.tenant('A').messageQuota;
    quota.used = quota.total - 1;
    const preview = textOf(await server.call('campaign.send', { id: draft._id }));
    expect(preview.match(SHORT)?.[0]).toBe(
      `- Not enough message quota for every recipient: ${draft.totalRecipients.toLocaleString('en-US')} recipients, 1 message left.`,
    );
    expect(sandbox.carriedOut()).toEqual([]);
  });
});
