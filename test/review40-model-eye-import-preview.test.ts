// Review 40 (the model's eye). "Import these contacts from this CSV; some are duplicates": the
// preview read only "Import 28 contact(s): “Pelanggan 1”, …", though two rows gave one number
// (0813-0000-0001 is 6281300000001) and one number was a contact's already; the person agreed to 28
// new contacts and the API imported 26. Now the preview names both, and what the API leaves unsaid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, structuredOf, textOf, type InProcess } from './helpers.js';

const NEW = Array.from({ length: 26 }, (_, i) => ({ name: `Pelanggan ${i + 1}`, msisdn: `62813000000${String(i + 1).padStart(2, '0')}` }));

describe('review40: the preview of contact.import', () => {
  let sandbox: Sandbox;
  let server: InProcess;
  beforeAll(async () => {
    sandbox = await startSandbox();
    server = await inProcess(DOMAINS.contact!, sandbox, { env: { ENGAGE_CONFIRM: 'all' } });
  });
  afterAll(async () => {
    await server?.close();
    await sandbox?.close();
  });

  it('names numbers given twice (as sent) and numbers a contact already has, with their names', async () => {
    const held = sandbox.tenant('A').contacts[0]!;
    const users = [...NEW, { name: 'Pelanggan Lama', msisdn: held.msisdn }, { name: 'Pelanggan 1 lagi', msisdn: '0813-0000-0001' }];
    const preview = textOf(await server.call('contact.import', { users }));
    expect(preview).toContain('Import 28 contact(s)');
    expect(preview).toContain(
      '- Numbers given twice or more in this import: 1 (6281300000001: “Pelanggan 1”, “Pelanggan 1 lagi”). The API does not say which of them it keeps.',
    );
    expect(preview).toContain(
      `- Numbers a contact already has (of the 40 contacts the API lists now): 1 (${held.msisdn}: “${held.name}”). The API does not say whether it skips, refuses or adds them again.`,
    );
    expect(sandbox.carriedOut()).toEqual([]);
  });

  it('an import of new numbers says none is held and names no repeat; its yes survives a contact added since', async () => {
    const users = NEW.slice(0, 3);
    const preview = await server.call('contact.import', { users });
    expect(textOf(preview)).toContain('- Numbers a contact already has (of the 40 contacts the API lists now): none.');
    expect(textOf(preview)).not.toContain('twice or more');
    const added = await server.call('contact.create', { name: 'Orang Lain', msisdn: '6281399999999' });
    const create = await server.call(
      'contact.create',
      { name: 'Orang Lain', msisdn: '6281399999999' },
      { confirmationToken: structuredOf(added).confirmationToken },
    );
    expect(structuredOf(create).outcome).toBe('done');
    const done = await server.call('contact.import', { users }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
  });
});
