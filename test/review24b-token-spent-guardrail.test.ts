// Review 24b, attacked: a host without elicitation, a send cap set, a campaign.send previewed and
// confirmed with its confirmationToken, and the recipients look-up failing at the moment of the
// send. The answer was "Refused by a guardrail: how many messages campaign.send would send could
// not be read … nothing was sent. Try again in a moment." The model tried again, as told, with
// the same token, and got "This confirmationToken was already used": the token was spent by the
// refusal. Every guardrail refusal after a token's yes now says the token is spent and a retry
// goes without it (as a passing failure after a token already did).
import { ApiClient, createLogger, loadConfig } from '@engage-mcp/shared';
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => {
  sandbox = started;
});
const SPENT = /The confirmationToken is spent: to try again, call without it \(the user is shown a new preview\)\./;

/** An API client whose look-ups fail from the `failFrom`-th one on, once armed. */
function flakyLookups(env: Record<string, string>) {
  const config = loadConfig(
    env,
    'campaign',
    DOMAINS.campaign!.operations.map((op) => op.id),
  );
  if (!config.ok) throw new Error(config.problems.join(' '));
  const client = new ApiClient(config.config, createLogger('test', 'error', [config.config.apiKey]));
  const request = client.request.bind(client);
  const state = { armed: false, seen: 0, failFrom: 0 };
  client.request = async (req, ctx) => {
    if (state.armed && req.lookup && ++state.seen >= state.failFrom) throw new Error('look-up failed (test)');
    return request(req, ctx);
  };
  return { client, state };
}

it('a send whose count cannot be read after a token yes says the token is spent, and a retry without it previews again', async () => {
  const campaign = sandbox.tenant('A').campaigns.find((entry) => entry.status === 'draft');
  expect(campaign).toBeDefined();
  const env = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_CAP_RECIPIENTS_PER_SEND: '100000' };
  const { client, state } = flakyLookups(env);
  const server = await serve('campaign.send', { env, server: { client } });
  const params = { id: campaign!._id };
  const preview = await server.call('campaign.send', params);
  expect(structuredOf(preview).outcome).toBe('preview');
  const token = structuredOf(preview).confirmationToken;
  // The yes reads the facts again (the campaign, its recipients, the quota: they still read), then
  // the claim counts the recipients (the campaign and its list): those look-ups fail.
  Object.assign(state, { armed: true, seen: 0, failFrom: 4 });
  const refused = await server.call('campaign.send', params, { confirmationToken: token });
  expect(structuredOf(refused).outcome).toBe('refused');
  expect(textOf(refused)).toMatch(/Refused by a guardrail: how many messages campaign\.send would send could not be read/);
  expect(textOf(refused)).toMatch(SPENT);
  expect(sandbox.carriedOut()).toEqual([]);
  // What the text says is so: the same token is refused as used; without it, a new preview.
  state.armed = false;
  expect(textOf(await server.call('campaign.send', params, { confirmationToken: token }))).toMatch(/already used/);
  expect(structuredOf(await server.call('campaign.send', params)).outcome).toBe('preview');
});

it('a daily cap reached between the preview and the token yes says the token is spent', async () => {
  const env = { ENGAGE_CAP_MESSAGES_PER_DAY: '1' };
  const channel = await serve('channel.whatsapp.send', { env });
  const one = { msisdn: '6281234567890', message: 'Your order ships today.' };
  const two = { msisdn: '6281234567891', message: 'And yours too.' };
  const tokenOne = structuredOf(await channel.call('channel.whatsapp.send', one)).confirmationToken;
  const tokenTwo = structuredOf(await channel.call('channel.whatsapp.send', two)).confirmationToken;
  expect(structuredOf(await channel.call('channel.whatsapp.send', one, { confirmationToken: tokenOne })).outcome).toBe('done');
  const capped = await channel.call('channel.whatsapp.send', two, { confirmationToken: tokenTwo });
  expect(textOf(capped)).toMatch(/Refused by a guardrail: .*ENGAGE_CAP_MESSAGES_PER_DAY/);
  expect(textOf(capped)).toMatch(SPENT);
});

it('a refusal at the claim without a token (ENGAGE_CONFIRM=none) says nothing of a token', async () => {
  const channel = await serve('channel.whatsapp.send', { env: { ENGAGE_CAP_MESSAGES_PER_DAY: '0', ENGAGE_CONFIRM: 'none' } });
  const capped = await channel.call('channel.whatsapp.send', { msisdn: '6281234567890', message: 'Hello.' });
  expect(textOf(capped)).toMatch(/Refused by a guardrail/);
  expect(textOf(capped)).not.toMatch(/confirmationToken/);
});
