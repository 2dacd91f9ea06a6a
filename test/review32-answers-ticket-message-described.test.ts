// Review 32 (answers): inbox_action described inbox.ticket.create as "{msisdn, channel, message?}
// Open a ticket with a customer.", and the model has nothing else. Its message is no note on the
// ticket: it is delivered to the customer as a reply is (the quiet hours and message caps count
// it, and an OAuth grant needs inbox.reply for it), and under the default ENGAGE_CONFIRM it goes
// with no question. A model that wrote an internal note there ("customer angry, follow up") sent it
// to the customer. Now the description says the message is sent to the customer (the reply's line
// gave up words the ticketID already says, to stay within the tools' size budget). Through the
// built server, as a host lists it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchServer, type LaunchedServer } from '../packages/sandbox/src/index.js';

let server: LaunchedServer;
beforeAll(async () => {
  server = await launchServer('inbox', { ENGAGE_BASE_URL: 'http://127.0.0.1:9', ENGAGE_API_KEY: 'eng_live_r32describedkey0000000000' });
});
afterAll(async () => server?.close());

it("inbox_action's line for inbox.ticket.create says its message is sent to the customer", async () => {
  const { tools } = await server.client.listTools();
  const description = tools.find((tool) => tool.name === 'inbox_action')?.description ?? '';
  const line = description.split('\n').find((text) => text.startsWith('- inbox.ticket.create '));
  expect(line).toMatch(/\{msisdn, channel, message\?\} .*message\? is sent to the customer/);
  // The reply's line still says where its text goes, and when.
  expect(description).toMatch(/- inbox\.ticket\.reply .*Reply to the customer \(delivered at once\)\./);
});
