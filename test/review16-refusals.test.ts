// Review 16: what the model is told when the API refuses a call (4xx). Before: a 402 (not enough
// message quota) and a 409 (a campaign that is not sending) both said "correct the request before
// trying again", though nothing in the request was wrong: the model would fiddle with params or
// retry instead of telling the person. A 401, 403 or 404 on a write did not say nothing was
// changed, and a 403 did not say where the new key goes. Reads are not told "nothing was changed".
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));
const none = { env: { ENGAGE_CONFIRM: 'none' } };

describe('an API refusal says what was refused, that nothing changed, and the next step that fits', () => {
  it.each(['v1', 'v2-modern'] as const)('%s: 402, not enough quota: tell the user, not "correct the request"', async (kind) => {
    const server = await serve('campaign.send', { ...none, kind });
    const draft = sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
    draft.totalRecipients = 1_000_000;
    const result = await server.call('campaign.send', { id: draft._id });
    expect(result.isError).toBe(true);
    expect(structuredOf(result).outcome).toBe('refused');
    expect(textOf(result)).toMatch(/HTTP 402\): “not enough message quota: \d+ needed, \d+ left”/);
    expect(textOf(result)).toMatch(/campaign\.send was not carried out; nothing was changed/);
    expect(textOf(result)).toMatch(/quota or plan[\s\S]*tell the user/);
    expect(textOf(result)).not.toMatch(/correct the request/);
  });

  it('409, a campaign that is not sending: its state, checked with the read that shows it, not "correct the request"', async () => {
    const server = await serve('campaign.cancel', none);
    const draft = sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
    const result = await server.call('campaign.cancel', { id: draft._id });
    expect(textOf(result)).toMatch(/HTTP 409\): “campaign is draft; only a sending campaign can be cancelled”/);
    expect(textOf(result)).toMatch(/nothing was changed\. What the API holds now conflicts with it[\s\S]*check with campaign\.progress and tell the user/);
    expect(textOf(result)).not.toMatch(/correct the request/);
  });

  it('403 on a write: nothing was changed, ask the user for a key with that scope, and where it goes', async () => {
    const server = await serve('contact.create', { env: { ENGAGE_CONFIRM: 'none', ENGAGE_API_KEY: sandbox.keys.readOnly } });
    const result = await server.call('contact.create', { name: 'Ani', msisdn: '6281234000001' });
    expect(structuredOf(result).outcome).toBe('refused');
    expect(textOf(result)).toMatch(/lacks the permission contact\.manage that contact\.create needs \(HTTP 403\)/);
    expect(textOf(result)).toMatch(/nothing was changed/);
    expect(textOf(result)).toMatch(/tell the user[\s\S]*set ENGAGE_API_KEY/);
  });

  it('401 and 404 on a write say nothing was changed; a 404 on a read does not talk of changes', async () => {
    const expired = await serve('contact.create', { env: { ENGAGE_CONFIRM: 'none', ENGAGE_API_KEY: sandbox.keys.expired } });
    expect(textOf(await expired.call('contact.create', { name: 'Ani', msisdn: '6281234000001' }))).toMatch(/HTTP 401\)[\s\S]*nothing was changed/);
    const server = await serve('contact.update', none);
    const missing = await server.call('contact.update', { id: 'no-such-contact', name: 'Ani' });
    expect(textOf(missing)).toMatch(
      /Not found \(HTTP 404\): “contact not found”\. contact\.update was not carried out; nothing was changed\. Use contact\.list/,
    );
    const read = await server.call('contact.byCampaign', { campaignID: 'no-such-campaign' });
    expect(textOf(read)).toMatch(/Not found \(HTTP 404\): “campaign not found”\. Use campaign\.list/);
    expect(textOf(read)).not.toMatch(/changed/);
  });

  it('400 on a read: correct the request, without "nothing was changed"', async () => {
    const server = await serve('inbox.ticket.byStatus');
    const result = await server.call('inbox.ticket.byStatus', { status: 'bogus' });
    expect(textOf(result)).toMatch(/HTTP 400\): “status must be one of open, pending, closed”\. Correct the request before trying again/);
    expect(textOf(result)).not.toMatch(/changed/);
  });
});
