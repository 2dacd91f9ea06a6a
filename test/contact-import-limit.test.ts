// The spec leaves a contact import's maximum size open (shared/src/assumptions.md): one call takes
// at most 10,000 contacts, refused with the params before anything is asked or sent.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, countCarriedOut, inProcess, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

const users = (count: number) => Array.from({ length: count }, (_, n) => ({ name: `Pelanggan ${n}`, msisdn: `62813${String(n).padStart(7, '0')}` }));

it('10,001 contacts are refused with the limit and what to do; nothing is asked or sent', async () => {
  const server = await inProcess(DOMAINS.contact!, sandbox, { env: { ENGAGE_CONFIRM: 'all' } });
  try {
    const result = await server.call('contact.import', { users: users(10_001) });
    expect(result.isError).toBe(true);
    expect(structuredOf(result).confirmationToken).toBeUndefined();
    expect(textOf(result)).toMatch(/at most 10,000 contacts per import: split the list into imports of 10,000 or fewer/);
    expect(countCarriedOut(sandbox, 'contact.import')).toBe(0);
  } finally {
    await server.close();
  }
});

it('10,000 contacts are within the limit: the preview says how many', async () => {
  const server = await inProcess(DOMAINS.contact!, sandbox, { env: { ENGAGE_CONFIRM: 'all' } });
  try {
    const result = await server.call('contact.import', { users: users(10_000) });
    expect(structuredOf(result).outcome, textOf(result)).toBe('preview');
    expect(textOf(result)).toContain('Import 10000 contact(s)');
  } finally {
    await server.close();
  }
});
