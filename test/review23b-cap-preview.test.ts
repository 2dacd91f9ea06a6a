// A preview of a send that a cap refuses as things stand showed "Recipients per send
// (ENGAGE_CAP_RECIPIENTS_PER_SEND): 12 of at most 1." or "Messages today: 1 of 1 used; this adds
// 1." and offered a token, without a word that the yes would be refused at the send: the model
// had the person say yes to a send that could not run. The line says so now (as it already did
// for a count that could not be read); under the cap it says nothing more.
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => {
  sandbox = started;
});
const OVER = /over the cap: as it stands, a yes is refused and nothing is sent/;

it('a campaign.send with more recipients than the per-send cap says a yes is refused', async () => {
  const campaign = sandbox.tenant('A').campaigns.find((entry) => entry.status === 'draft');
  expect(campaign).toBeDefined();
  const capped = await serve('campaign.send', { env: { ENGAGE_CAP_RECIPIENTS_PER_SEND: '1' } });
  const preview = await capped.call('campaign.send', { id: campaign!._id });
  expect(structuredOf(preview).outcome).toBe('preview');
  expect(textOf(preview)).toMatch(/Recipients per send \(ENGAGE_CAP_RECIPIENTS_PER_SEND\): \d+ of at most 1, over the cap: as it stands, a yes is refused/);
  // The yes is indeed refused, and nothing is sent.
  const yes = await capped.call('campaign.send', { id: campaign!._id }, { confirmationToken: structuredOf(preview).confirmationToken });
  expect(textOf(yes)).toMatch(/Refused by a guardrail: .*ENGAGE_CAP_RECIPIENTS_PER_SEND/);
  expect(sandbox.carriedOut()).toEqual([]);

  const roomy = await serve('campaign.send', { env: { ENGAGE_CAP_RECIPIENTS_PER_SEND: '100000' } });
  expect(textOf(await roomy.call('campaign.send', { id: campaign!._id }))).not.toMatch(OVER);
});

it('a WhatsApp send past the daily cap says a yes is refused; one within it does not', async () => {
  const channel = await serve('channel.whatsapp.send', { env: { ENGAGE_CAP_MESSAGES_PER_DAY: '1' } });
  const first = { msisdn: '6281234567890', message: 'Your order ships today.' };
  const preview = await channel.call('channel.whatsapp.send', first);
  expect(textOf(preview)).toMatch(/Messages today \(ENGAGE_CAP_MESSAGES_PER_DAY\): 0 of 1 used; this adds 1\. The count resets/);
  expect(textOf(preview)).not.toMatch(OVER);
  const sent = await channel.call('channel.whatsapp.send', first, { confirmationToken: structuredOf(preview).confirmationToken });
  expect(structuredOf(sent).outcome).toBe('done');

  const second = await channel.call('channel.whatsapp.send', { msisdn: '6281234567891', message: 'And yours too.' });
  expect(textOf(second)).toMatch(
    /Messages today \(ENGAGE_CAP_MESSAGES_PER_DAY\): 1 of 1 used; this adds 1, over the cap: as it stands, a yes is refused and nothing is sent\. The count resets/,
  );
});
