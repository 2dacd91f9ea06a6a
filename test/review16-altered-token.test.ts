// Review 16: a confirmationToken whose last part (the MAC over the preview's facts) was altered or
// cut, as a model copying a long token may do, was answered "What the earlier preview showed has
// changed since (a record it read reads otherwise now …)": the model would tell the person their
// campaign was edited when nothing changed. The facts' part is now covered by the token's own MAC,
// so such a token is "not valid (… altered)", like any other altered token; nothing is sent.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

const draft = () => sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
const sends = () => countCarriedOut(sandbox, 'campaign.send');

describe('a token altered in its facts part is called altered, not a change', () => {
  it.each([
    ['its last character changed', (token: string) => token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))],
    ['cut short', (token: string) => token.slice(0, -4)],
  ])('%s: not valid, nothing sent, and the genuine token still is the yes', async (_, alter) => {
    const server = await serve('campaign.send');
    const campaign = draft();
    const token = structuredOf(await server.call('campaign.send', { id: campaign._id })).confirmationToken as string;
    const altered = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: alter(token) });
    expect(structuredOf(altered).outcome).toBe('preview');
    expect(textOf(altered)).toMatch(
      /^The confirmationToken is not valid \(not one this server issued for this key since it started, or altered\): nothing was run/,
    );
    expect(textOf(altered)).not.toMatch(/has changed since/);
    expect(sends()).toBe(0);
    const genuine = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: token });
    expect(structuredOf(genuine).outcome, textOf(genuine)).toBe('done');
    expect(sends()).toBe(1);
  });

  it('a real change is still called a change', async () => {
    const server = await serve('campaign.send');
    const campaign = draft();
    const token = structuredOf(await server.call('campaign.send', { id: campaign._id })).confirmationToken;
    campaign.name = 'Renamed';
    const refused = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: token });
    expect(textOf(refused)).toMatch(/has changed since/);
    expect(sends()).toBe(0);
  });
});
