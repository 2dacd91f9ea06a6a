// Review 34 (calls), attacking 8bf2eec: a search that matches nothing names the fields it asks for
// that no record has ("a field:value word matches only a field of exactly that name"), a typo the
// model can fix. Attacked: a list with no records at all. Found: `name:Budi` over an empty contact
// list was told no record has the field "name", as if `name` were the typo, so the model went
// looking for another field name; nothing in an empty list tells which fields its records have.
// Now the note is said only of a list that has records. Through the built contact server over stdio.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
let server: LaunchedServer;
beforeAll(async () => {
  sandbox = await startSandbox();
  sandbox.tenant('B').contacts.length = 0;
  server = await launchServer('contact', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.otherTenant });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await sandbox?.close();
});

const search = async (words: string) =>
  (await server.client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', search: words } })) as CallToolResult;

it('a search over an empty list names no field as missing', async () => {
  const result = await search('name:Budi');
  expect(result.isError, textOf(result)).toBeFalsy();
  expect(structuredOf(result)).toMatchObject({ page: { total: 0, matched: 0 } });
  expect(textOf(result)).not.toContain('that the search names');
});

it('a list with records still names the field none of them has', async () => {
  sandbox.tenant('B').contacts.push({ _id: 'c-review34', name: 'Sari', msisdn: '6281300000034', tags: [], createdAt: '2026-11-29T00:00:00Z' });
  expect(textOf(await search('nme:Budi'))).toContain('No record has the field "nme" that the search names');
});
