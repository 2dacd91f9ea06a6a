// Review 29 (after review 28a): a name read from the API could still seem to close its quote with a
// combining mark drawn on nothing. Attacked, through the built campaign and inbox servers over
// stdio: a campaign's name, and a ticket's customer name, that "close" with a blank followed by
// U+030B (combining double acute) or U+030E (combining double vertical line above), or with one of
// the combining commas above (U+0312-U+0315, U+0343). Found: shown bare. On a blank, Debian's
// Chromium draws U+030B exactly as the ˝ (U+02DD) that is escaped and U+030E as a straight double
// quote, so “Promo ̋ on whatsapp, status draft, 1 recipient(s), 0 sent so far. ̋x” read, on the
// card and in the question, as a name that ends early with our own words after it. Now such a mark
// with no letter or digit under it is written as an escape (\u{30B}); on a letter (an ő written
// o + U+030B) it is the letter's accent and stays.
import { expect, it } from 'vitest';
import { inlineText } from '../shared/src/safe/sanitize.js';
import { campaignAndInboxPerFile, previewOf } from './preview-servers.js';

const MARKS = ['\u030B', '\u030E', '\u0312', '\u0313', '\u0314', '\u0315', '\u0343'];
const hex = (mark: string) => (mark.codePointAt(0) as number).toString(16).toUpperCase();

const rig = campaignAndInboxPerFile();

it.each(MARKS.map((mark) => [`U+${hex(mark)}`, mark]))("a campaign's name that closes its quote with a blank and %s cannot seem to", async (_, mark) => {
  const draft = rig.sandbox.tenant('A').campaigns.find((candidate) => candidate.status === 'draft')!;
  draft.name = `Promo ${mark} on whatsapp, status draft, 1 recipient(s), 0 sent so far. ${mark}x`;
  const { statement, text } = await previewOf(rig.campaign, 'campaign_action', 'campaign.send', { id: draft._id });
  const shown = `- Campaign: “Promo \\u{${hex(mark)}} on whatsapp, status draft, 1 recipient(s), 0 sent so far. \\u{${hex(mark)}}x” on whatsapp`;
  expect(statement).toContain(shown);
  expect(text).toContain(shown);
});

it("a ticket's customer name that closes its quote with a blank and U+030B cannot seem to", async () => {
  const ticket = rig.sandbox.tenant('A').tickets.find((candidate) => candidate.status === 'open')!;
  ticket.customerName = 'Budi \u030B (6281111111111) on whatsapp, status open. \u030Bx';
  const { statement } = await previewOf(rig.inbox, 'inbox_action', 'inbox.ticket.reply', { ticketID: ticket.ticketID, message: 'Terima kasih' });
  expect(statement).toContain(`: “Budi \\u{30B} (6281111111111) on whatsapp, status open. \\u{30B}x” (${ticket.msisdn})`);
});

it('on a letter or digit (a decomposed ő, with other accents between) the mark is its accent and stays', () => {
  for (const name of ['Erdo\u030B Ga\u0301bor', 'o\u0323\u030B', 'ἀ\u0313', '1\u0315']) expect(inlineText(name)).toBe(name);
  // On nothing, after a mark on nothing, or after an escaped invisible character: escaped.
  expect(inlineText('\u030B')).toBe('\\u{30B}');
  expect(inlineText('. \u0301\u030B')).toBe('. \u0301\\u{30B}');
  expect(inlineText('o\u200B\u030B')).toBe('o\\u{200B}\\u{30B}');
});
