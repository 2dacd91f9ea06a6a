// Review 20: a statement too long to show whole because of text read from the API (a campaign
// record that carries its message, 60,000 characters), not the model's params. Found: refused
// with "send shorter text or fewer fields", which the model cannot do (campaign.send takes an id)
// and which tells it something false about why. Still refused (outgoing text is never cut), now
// saying that what the API holds for the record is too long to show and where to check it.
import { expect, it } from 'vitest';
import { type Operation, validateParams } from '@engage-mcp/shared';
import { composeStatement } from '../shared/src/call/statement.js';
import { ALL_OPERATIONS } from './helpers.js';

it('review20: a statement too long because of the API’s text says so, not "send shorter text"', async () => {
  const op = ALL_OPERATIONS.find((candidate) => candidate.id === 'campaign.send') as Operation;
  const campaigns = [{ _id: 'c1', name: 'Promo', channel: 'whatsapp', status: 'draft', totalRecipients: 3, message: 'm'.repeat(60_000) }];
  const composed = composeStatement(
    op,
    validateParams(op, { id: 'c1' }),
    async (path) => (path === '/api/campaign/campaigns' ? campaigns : undefined),
    () => [],
    (text) => text,
  );
  await expect(composed).rejects.toThrow(/what the API holds for it .* is too long to show whole[\s\S]*Nothing was sent/);
  await expect(composed).rejects.not.toThrow(/send shorter text/);
});
