// Review 35 (the model's eye). "Send the VIP contacts a WhatsApp template": the confirmation of a
// template send showed the template's name only, so the person agreed to a text they never saw,
// and a name the API does not list was put to them as if it would go. Now the preview reads the
// approved templates and shows the one named, in words (its layout is not in the spec), with the
// yes bound to it; a name the list lacks is said to be missing, and a language it lacks too.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { inProcessPerFile } from './helpers/in-process-per-file.js';

const file = inProcessPerFile('channel');

const tokenOf = (result: CallToolResult) => structuredOf(result).confirmationToken as string;

describe('review35: the confirmation of a template send', () => {
  it('shows the approved template as the API lists it, and a yes is bound to it', async () => {
    const template = file.sandbox.tenant('A').templates.find((item) => item.name === 'promo_umum')!;
    const params = { msisdn: '6281299990036', template: { name: 'promo_umum', language: template.language, parameters: ['Bayu', 'diskon 20%'] } };
    const preview = await file.server.call('channel.whatsapp.send', params);
    expect(structuredOf(preview).outcome).toBe('preview');
    expect(textOf(preview)).toContain(`“body”: “${template.body}”`);

    // The template changed after the person saw it: their yes does not send the new text.
    const before = countCarriedOut(file.sandbox, 'channel.whatsapp.send');
    const body = template.body;
    template.body = 'Halo {{1}}, teks lain: {{2}}';
    try {
      const again = await file.server.call('channel.whatsapp.send', params, { confirmationToken: tokenOf(preview) });
      expect(structuredOf(again).outcome, textOf(again)).not.toBe('done');
      expect(countCarriedOut(file.sandbox, 'channel.whatsapp.send')).toBe(before);
    } finally {
      template.body = body;
    }
  });

  it('says so when the API lists no approved template of that name', async () => {
    const preview = await file.server.call('channel.whatsapp.send', { msisdn: '6281299990037', template: { name: 'promo_vip' } });
    expect(structuredOf(preview).outcome).toBe('preview');
    expect(textOf(preview)).toMatch(/Template “promo_vip”: not among the approved templates the API lists now \(channel\.whatsapp\.templates\)/);
  });

  it('says so when the API lists the template in other languages only, and shows those', async () => {
    const template = file.sandbox.tenant('A').templates.find((item) => item.name === 'order_update')!;
    const preview = await file.server.call('channel.whatsapp.send', { msisdn: '6281299990039', template: { name: 'order_update', language: 'en' } });
    expect(textOf(preview)).toContain(`Template “order_update”: the API lists it, but none in language “en”, only: `);
    expect(textOf(preview)).toContain(`“body”: “${template.body}”`);
  });

  it('a list whose records carry no language field shows the template by name, claiming nothing of its language', async () => {
    const templates = file.sandbox.tenant('A').templates as Array<Record<string, unknown>>;
    const saved = templates.map((item) => ({ ...item }));
    for (const item of templates) delete item.language;
    try {
      const preview = await file.server.call('channel.whatsapp.send', { msisdn: '6281299990040', template: { name: 'order_update', language: 'en' } });
      expect(textOf(preview)).toMatch(/- Template as the API lists it: name: order_update; /);
      expect(textOf(preview)).not.toMatch(/none in language/);
    } finally {
      templates.splice(0, templates.length, ...saved);
    }
  });

  it('a template in the Cloud API shape, with a body of 1,024 characters, is shown whole', async () => {
    const templates = file.sandbox.tenant('A').templates as Array<Record<string, unknown>>;
    const saved = templates.map((item) => ({ ...item }));
    const body = `Halo {{1}}, ${'promo akhir tahun untuk pelanggan setia kami. '.repeat(22)}`.slice(0, 1024);
    const components = [
      { type: 'HEADER', format: 'TEXT', text: 'Promo Akhir Tahun Toko Batik Sekar: diskon semua koleksi' },
      { type: 'BODY', text: body },
      { type: 'FOOTER', text: 'Balas STOP untuk berhenti menerima promo dari kami' },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'QUICK_REPLY', text: 'Tertarik, hubungi saya' },
          { type: 'QUICK_REPLY', text: 'Nanti saja, terima kasih' },
          { type: 'PHONE_NUMBER', text: 'Telepon toko', phone_number: '+6274512345' },
          { type: 'URL', text: 'Lihat katalog', url: 'https://example.co.id/katalog/{{1}}' },
        ],
      },
    ];
    // Longer than any 1,500-character cut of a record: the whole of it is what the customer gets.
    const record = { id: '1234567890', name: 'promo_akhir', language: 'id', status: 'APPROVED', category: 'MARKETING', components };
    expect(JSON.stringify(record).length).toBeGreaterThan(1500);
    templates.splice(0, templates.length, record);
    try {
      const preview = await file.server.call('channel.whatsapp.send', {
        msisdn: '6281299990041',
        template: { name: 'promo_akhir', language: 'id', parameters: ['Bayu'] },
      });
      expect(textOf(preview)).toContain(body.slice(-100));
      expect(textOf(preview)).toContain('Balas STOP untuk berhenti menerima promo dari kami');
      expect(textOf(preview)).toContain('https://example.co.id/katalog/{{1}}');
    } finally {
      templates.splice(0, templates.length, ...saved);
    }
  });

  it('of a text message reads no templates', async () => {
    file.sandbox.clearLogs();
    const preview = await file.server.call('channel.whatsapp.send', { msisdn: '6281299990038', message: 'Halo' });
    expect(structuredOf(preview).outcome).toBe('preview');
    expect(textOf(preview)).not.toMatch(/Template/);
    expect(file.sandbox.requests().map((request) => request.operationId)).not.toContain('channel.whatsapp.templates');
  });
});
