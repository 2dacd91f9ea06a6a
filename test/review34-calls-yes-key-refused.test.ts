// Review 34 (calls), attacking 976f686 (a preview's look-up answered 401 ends the call with the
// key's refusal). Attacked: the key revoked while the person reads the question, so the look-ups
// that check the yes against what it was shown (confirm.ts boundNow) meet the 401. Found: the yes
// was answered "what they were asked about could not be read again … Call again with the same
// operationId and params", as for a look-up that failed by chance; only that next call said the key
// was refused. Now the yes's own look-ups end the call with the key's refusal, in both protocol eras
// (a 2025 elicitation, a 2026-07-28 input_required round), nothing sent.
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

it.each(['v1', 'v2-modern'] as const)('%s: a yes given after the key was revoked gets the key refusal at once', async (kind) => {
  const campaign = sandbox.tenant('A').campaigns.find((each) => each.status === 'draft')!;
  const server = await serve('campaign.send', {
    kind,
    elicit: () => {
      sandbox.revokeKey(sandbox.keys.full);
      return { action: 'accept', content: { confirm: true } };
    },
  });
  const answered = await server.call('campaign.send', { id: campaign._id });
  expect(answered.isError).toBe(true);
  expect(textOf(answered)).toContain('The API refused the key (HTTP 401)');
  expect(textOf(answered)).not.toContain('could not be read again');
  expect(structuredOf(answered).outcome).toBe('refused');
  expect(countCarriedOut(sandbox, 'campaign.send')).toBe(0);
});
