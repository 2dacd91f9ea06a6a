// Review 32 (answers): an unknown field inside a nested object of params was named as if it stood
// at the top: contact.import with users[0].phone answered "params.phone is not a field of this
// operation", sending the model to look for a field it never wrote there; and one named limit (or
// offset, fields, search) inside a contact was taken for the read tools' list argument: "limit is
// an argument of the tool: give it beside operationId and params", on an action tool that has no
// such argument. Now the whole path is named (params.users.0.phone), and the hint about the tool's
// list arguments is given only for a field at the top of params. Through the built server, as a
// host runs it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';

let sandbox: Sandbox;
let server: LaunchedServer;
beforeAll(async () => {
  sandbox = await startSandbox();
  server = await launchServer('contact', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_CONFIRM: 'none' });
});
afterAll(async () => {
  await server?.close();
  await sandbox?.close();
});

async function importing(users: unknown[]) {
  const result = await server.client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.import', params: { users } } });
  return { text: (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n'), isError: result.isError };
}

it('an unknown field inside a contact of an import is named where it is', async () => {
  const answer = await importing([{ name: 'Ayu Lestari', msisdn: '628123400006', phone: '628123400006' }]);
  expect(answer.isError).toBe(true);
  expect(answer.text).toMatch(/^Invalid params for contact\.import: params\.users\.0\.phone is not a field of params\.users\.0\./);
  expect(answer.text).not.toMatch(/params\.phone /);
  expect(sandbox.carriedOut()).toHaveLength(0);
});

it('a field named limit inside a contact is not taken for the list argument of a read tool', async () => {
  const answer = await importing([
    { name: 'Ayu Lestari', msisdn: '628123400006' },
    { name: 'Bima Putra', msisdn: '628123400007', limit: 5 },
  ]);
  expect(answer.text).toMatch(/params\.users\.1\.limit is not a field of params\.users\.1\./);
  expect(answer.text).not.toMatch(/argument of the tool/);
});
