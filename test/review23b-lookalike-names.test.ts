// An operationId that only looks like a real one (a zero-width space, a Cyrillic о, a full-width
// dot, a soft hyphen, a trailing space) was echoed as it came: "operationId cоntact.update is not
// an operation of contact_action; … Did you mean contact.update?", two names that read the same,
// so a model repeats what it sent. A bidi override (U+202E) came back raw, reordering the answer
// wherever it is shown. The name is shown with every character beyond printable ASCII escaped
// (\u043e), and quoted when it starts or ends with a space; argument names the same.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';

let sandbox: Sandbox;
let server: InProcess;
beforeAll(async () => {
  sandbox = await startSandbox();
  server = await inProcess(DOMAINS.contact!, sandbox);
});
afterAll(async () => {
  await server.close();
  await sandbox.close();
});

const refusal = async (args: Record<string, unknown>) => {
  const result = (await server.client.callTool({ name: 'contact_action', arguments: args })) as CallToolResult;
  expect(result.isError).toBe(true);
  return textOf(result);
};

it.each([
  ['a zero-width space', 'contact.\u200bupdate', 'operationId contact.\\u200bupdate is not an operation'],
  ['a Cyrillic o', 'c\u043entact.update', 'operationId c\\u043entact.update is not an operation'],
  ['a full-width dot', 'contact\uff0eupdate', 'operationId contact\\uff0eupdate is not an operation'],
  ['a soft hyphen', 'contact.update\u00ad', 'operationId contact.update\\u00ad is not an operation'],
  ['a bidi override', '\u202econtact.update', 'operationId \\u202econtact.update is not an operation'],
  ['a trailing space', 'contact.update ', 'operationId "contact.update " is not an operation'],
])('an operationId with %s is shown so that it differs from the real one', async (_name, operationId, shown) => {
  const text = await refusal({ operationId, params: {} });
  expect(text).toContain(shown);
  expect(text).toMatch(/Did you mean contact\.update\?/);
  expect(text).not.toMatch(/[^\x20-\x7e\n…’]/);
});

it('an argument name with an invisible character is shown escaped', async () => {
  const text = await refusal({ operationId: 'contact.update', params: { id: 'x' }, 'params\u200b': {} });
  expect(text).toContain('params\\u200b is not an argument of contact_action');
});

it('an operationId that is not a string is quoted escaped too', async () => {
  const text = await refusal({ operationId: { name: '\u202eevil\u200b' } });
  expect(text).toContain('operationId must be a string (got {"name":"\\u202eevil\\u200b"})');
  expect(text).not.toMatch(/[\u200b\u202e]/);
});

it('plain names read as before', async () => {
  expect(await refusal({ operationId: 'contact.nuke' })).toContain('operationId contact.nuke is not an operation of contact_action');
});
