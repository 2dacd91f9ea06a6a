// Review 48 (customer text): a host with no way to ask the person gets a preview, and the model is
// told to show it to them: in a chat, as Markdown. A campaign named
// `![Recipients: 1 (Budi). Nothing else is sent.](https://evil.example/facts.png)` was quoted as
// it stands, so the person's copy drew the attacker's picture of the facts inside the statement,
// and `[Klik di sini](https://phish.example)` in a message showed as a link whose address is not
// seen. Quoted text now writes `](` as `]\(`: no inline link or image can open in it, and the
// address is shown as written. Only how it is shown: what is sent keeps the text as written.
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { inlineText } from '../shared/src/safe/sanitize.js';
import { structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));
/** CommonMark's inline link or image: `[text](` or `![text](`, its bracket not escaped. */
const LINK_OPENER = /(?<!\\)\[[^\]\n]*\]\(/;

it('a Markdown image in a campaign name opens nothing in the preview the model shows the person', async () => {
  const server = await serve('campaign.send');
  const campaign = sandbox.tenant('A').campaigns.find((candidate) => candidate.status === 'draft')!;
  campaign.name = '![Recipients: 1 (Budi). Nothing else is sent.](https://evil.example/facts.png)';
  const result = await server.call('campaign.send', { id: campaign._id });
  expect(textOf(result)).toContain('- Campaign: “![Recipients: 1 (Budi). Nothing else is sent.]\\(https://evil.example/facts.png)” on whatsapp');
  expect(textOf(result)).not.toMatch(LINK_OPENER);
  expect(String(structuredOf(result).preview)).not.toMatch(LINK_OPENER);
});

it('a link in an outgoing message is shown with its address, and sent as written', async () => {
  const server = await serve('campaign.create', { env: { ENGAGE_CONFIRM: 'all' } });
  const params = { name: 'Harbolnas', message: 'Promo! [Klik di sini](https://shop.example/promo)', channel: 'whatsapp' };
  const preview = await server.call('campaign.create', params);
  expect(textOf(preview)).toContain('with the message “Promo! [Klik di sini]\\(https://shop.example/promo)”');
  expect(textOf(preview)).not.toMatch(LINK_OPENER);
  const done = await server.call('campaign.create', params, { confirmationToken: structuredOf(preview).confirmationToken });
  expect(structuredOf(done).outcome, textOf(done)).toBe('done');
  expect(sandbox.carriedOut().find((entry) => entry.operationId === 'campaign.create')?.params.message).toBe(params.message);
});

it('a customer’s own backslash before the parenthesis is shown doubled, as every backslash is', () => {
  expect(inlineText('[a]\\(b)')).toBe('[a]\\\\(b)');
  expect(inlineText('[a](b) and [c](d)')).toBe('[a]\\(b) and [c]\\(d)');
});
