// Review 32 (answers): params with more than five problems were answered with the first five and
// nothing more: an import of 40 contacts without their numbers was told of users.0 to users.4, and
// the model, taking that for the whole, fixed those five and met the next five, eight calls for
// one mistake. Now the answer says how many more problems there are beyond those shown. Through the
// built server, as a host runs it.
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

it('an import of 40 contacts without numbers says that 35 more problems follow the five shown', async () => {
  const users = Array.from({ length: 40 }, (_, index) => ({ name: `Kontak ${index + 1}` }));
  const result = await server.client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.import', params: { users } } });
  const text = (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');
  expect(result.isError).toBe(true);
  expect(text).toMatch(/params\.users\.4\.msisdn is required; and 35 more problems \(fix them all before calling again\)\. Expected params/);
  expect(text).not.toMatch(/params\.users\.5\./);
});

it('five problems or fewer are listed as before, with nothing added', async () => {
  const result = await server.client.callTool({
    name: 'contact_action',
    arguments: { operationId: 'contact.import', params: { users: [{ name: 'Kontak 1' }] } },
  });
  const text = (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');
  expect(text).toMatch(/^Invalid params for contact\.import: params\.users\.0\.msisdn is required\. Expected params/);
});
