// Review 40 (the model's eye). "Can we afford this campaign?": the send's preview showed the
// campaign's recipients on one line and the quota on another ("5040 recipient(s)", "message quota:
// 3,790 of 5,000 left"), and a model agreed on the person's behalf to read them; nothing said the
// two do not fit, nor that the API does not say what it then does. Now the preview says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, structuredOf, textOf, type InProcess } from './helpers.js';

const SHORT = /^- Not enough message quota for every recipient: .*$/m;

describe('review40: a campaign send with fewer messages left than recipients', () => {
  let sandbox: Sandbox;
  let server: InProcess;
  const asked: string[] = [];
  let asking: InProcess;
  beforeAll(async () => {
    sandbox = await startSandbox();
    server = await inProcess(DOMAINS.campaign!, sandbox);
    asking = await inProcess(DOMAINS.campaign!, sandbox, {
      kind: 'v2-legacy',
      elicit: (message) => {
        asked.push(message);
        return { action: 'decline' };
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await asking?.close();
    await sandbox?.close();
  });
  const draft = () => sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;

  it('says how many recipients and how many messages are left, in the preview and the question', async () => {
    sandbox.tenant('A').messageQuota.used = 4_995;
    const preview = textOf(await server.call('campaign.send', { id: draft()._id }));
    expect(preview.match(SHORT)?.[0]).toBe(
      `- Not enough message quota for every recipient: ${draft().totalRecipients} recipients, 5 messages left. The API does not say whether it then refuses the send or sends until the quota runs out.`,
    );
    await asking.call('campaign.send', { id: draft()._id });
    expect(asked.at(-1)).toMatch(SHORT);
    expect(sandbox.carriedOut()).toEqual([]);
  });

  it('says nothing of it where the quota covers every recipient; the quota moving does not undo a yes', async () => {
    sandbox.tenant('A').messageQuota.used = 1_210;
    const preview = await server.call('campaign.send', { id: draft()._id });
    expect(textOf(preview)).not.toMatch(SHORT);
    sandbox.tenant('A').messageQuota.used = 1_300;
    const sent = await server.call('campaign.send', { id: draft()._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
  });
});
