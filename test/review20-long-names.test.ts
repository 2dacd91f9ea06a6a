// Review 20: a name read from the API so long that it pushes the real facts out of view, or the
// statement past what can be shown. Attacked: a campaign named with 60,000 characters, and one of
// 3,000, on campaign.send (preview and 2025 question), and a contact's name on contact.delete.
// Found: the name was quoted whole, so the recipient count came after thousands of characters,
// and a name past the statement's cap refused the send with "send shorter text or fewer fields",
// which the model cannot do (its params are an id) and which blocks every send of that campaign.
// Now a name read from the API is shown up to 300 characters, then said to be cut, with the
// facts after it in view; the yes is still bound to the whole name (a change past the cut undoes
// it). Outgoing text (a message) is still shown whole or refused.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));
const draft = () => sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
const line = (statement: string, start: string) => statement.split('\n').find((candidate) => candidate.startsWith(start)) ?? '';

describe('review20: a long name read from the API', () => {
  it.each([3_000, 60_000])('a campaign named with %i characters: shown cut, the count in view; a change past the cut undoes the yes', async (length) => {
    const server = await serve('campaign.send');
    const campaign = draft();
    campaign.name = 'N'.repeat(length);
    const preview = await server.call('campaign.send', { id: campaign._id });
    expect(structuredOf(preview).outcome, textOf(preview).slice(0, 300)).toBe('preview');
    const shown = line(structuredOf(preview).preview as string, '- Campaign: ');
    expect(shown).toMatch(/^- Campaign: “N{300}…” \(cut: [\d,]+ characters in all\) on whatsapp, status draft, \d+ recipient\(s\), 0 sent so far\.$/);

    campaign.name = `${'N'.repeat(1_000)}M${'N'.repeat(length - 1_001)}`; // past the cut, same length
    const refused = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(textOf(refused)).toMatch(/has changed since/);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(0);
  });

  it('the 2025 question shows the same; a contact’s name too', async () => {
    const questions: string[] = [];
    const server = await serve('campaign.send', {
      elicit: (message) => {
        questions.push(message);
        return { action: 'decline' };
      },
    });
    draft().name = 'N'.repeat(5_000);
    await server.call('campaign.send', { id: draft()._id });
    expect(line(questions[0] ?? '', '- Campaign: ').length).toBeLessThan(500);

    const contacts = await serve('contact.delete');
    const contact = sandbox.tenant('A').contacts[0]!;
    contact.name = 'C'.repeat(5_000);
    const preview = await contacts.call('contact.delete', { id: contact._id });
    expect(line(structuredOf(preview).preview as string, '- Contact: ')).toMatch(/^- Contact: “C{300}…” \(cut: 5,000 characters in all\) \(\d+\)\.$/);
  });
});
