// Review 48 (customer text): campaign.send's preview showed the campaign's message (where the API
// includes it: the text whoever made the campaign wrote, an import's, shown whole as it goes out)
// before the facts a person counts on: the warning that the recipient list holds more than the
// campaign says, the quota, and that the quota is short. A message of 30,000 characters put all of
// them that far down the question and the card, past where a host's dialog stops showing. The
// counts now come first, and the message is the last fact, still whole.
import { expect, it } from 'vitest';
import { structuredOf } from './helpers.js';
import { envelope, hostileApiPerFile } from './hostile-api.js';

const stand = hostileApiPerFile();
const MESSAGE = `Halo kak, ${'diskon besar hari ini! '.repeat(1_300)}`;

it('the recipient warning and the quota come before a long message, which is shown whole', async () => {
  stand.api.respond((request) => {
    if (request.path === '/api/campaign/campaigns')
      return envelope([{ _id: 'c1', name: 'Promo', channel: 'whatsapp', status: 'draft', totalRecipients: 12, sentCount: 0, message: MESSAGE }]);
    if (request.path === '/api/user/users/campaign/c1') return envelope(Array.from({ length: 5_000 }, (_, index) => ({ _id: `u${index}` })));
    if (request.path === '/api/ai/v1/quota') return envelope({ messageQuota: { total: 5_000, used: 4_900, remaining: 100 } });
    return envelope([]);
  });
  const server = await stand.serve('campaign');
  const result = await server.call('campaign.send', { id: 'c1' });
  const preview = String(structuredOf(result).preview);
  const facts = preview.split('\n').filter((line) => line.startsWith('- '));
  const at = (start: string) => facts.findIndex((line) => line.startsWith(start));
  const message = at('- Message that goes out: ');
  expect(message, preview.slice(0, 2_000)).toBe(facts.length - 1);
  expect(facts[message]).toContain(MESSAGE.trim());
  for (const fact of ['- Campaign: “Promo”', '- Recipients: its recipient list holds 5000', '- Quota before sending:', '- Not enough message quota']) {
    expect(at(fact), fact).toBeGreaterThanOrEqual(0);
    expect(at(fact), fact).toBeLessThan(message);
  }
});
