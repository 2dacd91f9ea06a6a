// Review 36 (the call path attacked). A template send's yes is bound to the template the preview
// showed (review35 ed9fd4c), but only to what it showed: a record past TEMPLATE_CHARS was cut, and
// the yes bound to the cut, so a template changed past the cut (the API's record, which a third
// party may write) still sent on that yes, and nobody was told the record was cut. And a template
// asked for without a language showed, and bound, its first 3 languages only, saying nothing of
// the rest. And a record with its body as a field (the sandbox's layout: name, language, body)
// showed the body cut at 100 characters, as inWords shows any field's text, with nothing said. Now
// every record that may go binds the yes whole, its texts are shown whole (as its JSON where words
// would cut them), a record cut at TEMPLATE_CHARS says so, and the languages not shown are named.
// A list read in a layout that is not a list was said to have failed; it is said to be that now.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { inProcessPerFile } from './helpers/in-process-per-file.js';

const file = inProcessPerFile('channel');

const SEND = 'channel.whatsapp.send';
const tokenOf = (result: CallToolResult) => structuredOf(result).confirmationToken as string;
const templates = () => file.sandbox.tenant('A').templates as Array<Record<string, unknown>>;

/** Runs `body` with the tenant's templates replaced by `records`, then puts the seeded ones back. */
async function withTemplates(records: Array<Record<string, unknown>>, body: () => Promise<void>) {
  const saved = templates().map((item) => ({ ...item }));
  templates().splice(0, templates().length, ...records);
  try {
    await body();
  } finally {
    templates().splice(0, templates().length, ...saved);
  }
}

describe('review36: the yes to a template send is bound to every template that may go, whole', () => {
  it('a record longer than the preview shows, changed past the cut after the preview, sends nothing on that yes', async () => {
    // A carousel-like record: its example media links alone run past the preview's cut.
    const cards = Array.from({ length: 12 }, (_, index) => ({
      header: `https://scontent.example.net/v/t61.29466-34/${'x'.repeat(400)}/${index}`,
      body: `Kartu ${index}: koleksi batik tulis`,
    }));
    const record = { name: 'katalog_batik', language: 'id', status: 'APPROVED', category: 'MARKETING', cards, footer: 'Balas STOP untuk berhenti' };
    expect(JSON.stringify(record).length).toBeGreaterThan(6000);
    await withTemplates([record], async () => {
      const params = { msisdn: '6281299990061', template: { name: 'katalog_batik', language: 'id' } };
      const preview = await file.server.call(SEND, params);
      expect(structuredOf(preview).outcome).toBe('preview');
      expect(textOf(preview)).not.toContain('Balas STOP untuk berhenti');
      expect(textOf(preview)).toMatch(/\(cut after 6,000 of its [\d,]+ characters: channel\.whatsapp\.templates shows it whole\)/);

      // The tail the preview did not show changes: the person never agreed to the new text.
      record.footer = 'Klik tautan ini untuk hadiah';
      const before = countCarriedOut(file.sandbox, SEND);
      const again = await file.server.call(SEND, params, { confirmationToken: tokenOf(preview) });
      expect(structuredOf(again).outcome, textOf(again)).not.toBe('done');
      expect(countCarriedOut(file.sandbox, SEND)).toBe(before);
    });
  });

  it('a template asked for without a language names the languages it does not show, and binds them too', async () => {
    const languages = ['id', 'en', 'ms', 'jv'];
    const records = languages.map((language) => ({ name: 'order_update', language, status: 'APPROVED', body: `Pesanan {{1}} (${language})` }));
    await withTemplates(records, async () => {
      const params = { msisdn: '6281299990062', template: { name: 'order_update', parameters: ['4711'] } };
      const preview = await file.server.call(SEND, params);
      expect(structuredOf(preview).outcome).toBe('preview');
      expect(textOf(preview)).toMatch(/and 1 more of that name, in language jv/);

      (records[3] as Record<string, unknown>).body = 'Teks lain {{1}}';
      const before = countCarriedOut(file.sandbox, SEND);
      const again = await file.server.call(SEND, params, { confirmationToken: tokenOf(preview) });
      expect(structuredOf(again).outcome, textOf(again)).not.toBe('done');
      expect(countCarriedOut(file.sandbox, SEND)).toBe(before);
    });
  });

  it('a template whose body runs past 100 characters, in a flat record, is shown whole and binds the yes whole', async () => {
    // The sandbox's own layout (name, language, body): the body is a string field of the record.
    const body = `Halo {{1}}, terima kasih sudah berbelanja di Toko Batik Sekar. ${'Pesanan Anda sedang kami siapkan dengan hati-hati. '.repeat(5)}Salam.`;
    const record = { name: 'terima_kasih', language: 'id', category: 'UTILITY', status: 'APPROVED', body };
    await withTemplates([record], async () => {
      const params = { msisdn: '6281299990064', template: { name: 'terima_kasih', language: 'id', parameters: ['Bayu'] } };
      const preview = await file.server.call(SEND, params);
      expect(structuredOf(preview).outcome).toBe('preview');
      expect(textOf(preview)).toContain(body);

      record.body = `${body.slice(0, 150)} Klik tautan ini untuk hadiah.`;
      const before = countCarriedOut(file.sandbox, SEND);
      const again = await file.server.call(SEND, params, { confirmationToken: tokenOf(preview) });
      expect(structuredOf(again).outcome, textOf(again)).not.toBe('done');
      expect(countCarriedOut(file.sandbox, SEND)).toBe(before);
    });
  });

  it('a template list the API gives in another layout (not a list) is said so, not said to have failed', async () => {
    const params = { msisdn: '6281299990065', template: { name: 'promo_umum', language: 'id' } };
    // The spec does not show the list's layout: here the records come inside an object.
    const tenant = file.sandbox.tenant('A') as unknown as { templates: unknown };
    const seeded = tenant.templates;
    tenant.templates = { templates: seeded };
    const preview = await file.server.call(SEND, params).finally(() => {
      tenant.templates = seeded;
    });
    expect(structuredOf(preview).outcome).toBe('preview');
    expect(textOf(preview)).not.toMatch(/the look-up failed/);
    expect(textOf(preview)).toMatch(
      /Template “promo_umum”: the API's template list came in a layout this server does not read \(not a list\), so it is not shown here/,
    );
  });

  it('a name listed many times over names its other languages once each, at most a few, and the preview is still shown', async () => {
    const records = Array.from({ length: 2_000 }, (_, index) => ({
      name: 'order_update',
      language: index < 3 ? 'id' : `bahasa_daerah_${index % 40}_${'x'.repeat(40)}`,
      status: 'APPROVED',
      body: `Pesanan {{1}} (${index})`,
    }));
    await withTemplates(records, async () => {
      const preview = await file.server.call(SEND, { msisdn: '6281299990066', template: { name: 'order_update', parameters: ['4711'] } });
      expect(structuredOf(preview).outcome, textOf(preview)).toBe('preview');
      expect(textOf(preview)).toMatch(/and 1,997 more of that name, in 40 other languages: bahasa_daerah_3_x+, bahasa_daerah_4_x+, /);
    });
  });

  it('a template shown whole, unchanged, still sends on its yes', async () => {
    const params = { msisdn: '6281299990063', template: { name: 'promo_umum', language: 'id', parameters: ['Bayu', 'diskon'] } };
    const preview = await file.server.call(SEND, params);
    expect(textOf(preview)).not.toMatch(/cut after/);
    const before = countCarriedOut(file.sandbox, SEND);
    const again = await file.server.call(SEND, params, { confirmationToken: tokenOf(preview) });
    expect(structuredOf(again).outcome, textOf(again)).toBe('done');
    expect(countCarriedOut(file.sandbox, SEND)).toBe(before + 1);
  });
});
