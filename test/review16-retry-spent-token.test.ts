// Review 16: a write confirmed with a confirmationToken that the API turned away with a 429 was
// told "Try again in N seconds". The model repeats the call as it was, with the token, which is
// spent: one more refusal, then a new preview. The answer now says the token is spent and to call
// without it. A yes given by the host's question has no token, and is told nothing of one.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

const draft = () => sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
const env = { ENGAGE_MAX_RETRY_WAIT_S: '0' };

describe('a confirmed write the API turned away for now says how to try again', () => {
  it('token: the 429 answer says the token is spent and to call without it', async () => {
    const server = await serve('campaign.send', { env });
    const campaign = draft();
    const token = structuredOf(await server.call('campaign.send', { id: campaign._id })).confirmationToken;
    sandbox.injectFault({ kind: 'rate-limit', retryAfter: '30', operationId: 'campaign.send', times: 5 });
    const refused = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: token });
    expect(structuredOf(refused).outcome).toBe('refused');
    expect(textOf(refused)).toMatch(/was not carried out\. Try again in 30 seconds\. The confirmationToken is spent: to try again, call without it/);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(0);
  });

  it('a yes by the host question: the 429 answer names no token', async () => {
    const server = await serve('campaign.send', { env, elicit: () => ({ action: 'accept', content: { confirm: true } }) });
    sandbox.injectFault({ kind: 'rate-limit', retryAfter: '30', operationId: 'campaign.send', times: 5 });
    const refused = await server.call('campaign.send', { id: draft()._id });
    expect(textOf(refused)).toMatch(/Try again in 30 seconds\.$/);
    expect(textOf(refused)).not.toMatch(/confirmationToken/);
  });
});
