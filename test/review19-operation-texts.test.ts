// Review 19: review16's answers to a wrong operationId (673c08a) read "use one of contact.list,
// contact.byCampaign.. Nothing was sent." and "Did you mean contact.list?. Nothing was sent." on
// every miss, and any id with another domain's prefix was called an operation of that server:
// "contact.x is an operation of the contact server … call it there", though no server has it.
// Now the sentences end once, and such an id is said to name that domain, whose operations are
// on the other server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';

let sandbox: Sandbox;
let server: InProcess;

beforeAll(async () => {
  sandbox = await startSandbox();
  server = await inProcess(DOMAINS.product!, sandbox);
});
afterAll(async () => {
  await server.close();
  await sandbox.close();
});

const answer = async (operationId: string) => textOf((await server.client.callTool({ name: 'product_action', arguments: { operationId } })) as CallToolResult);

describe('a wrong operationId is answered in sentences that end once', () => {
  it.each(['product.creat', 'Product.Create', 'product.zz', '', 'product.list'])('%s', async (operationId) => {
    const text = await answer(operationId);
    expect(text).toMatch(/Nothing was sent\.$/);
    expect(text).not.toMatch(/\.\.|\?\./);
  });

  it('an id with another domain prefix is not called an operation of that server', async () => {
    const text = await answer('contact.x');
    expect(text).not.toMatch(/is an operation of the contact server/);
    expect(text).toMatch(/names the contact domain, whose operations are on the contact server \(engage-contact/);
  });
});
