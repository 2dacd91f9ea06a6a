// Review 35 (the model's eye). Some models write a tool's arguments out as strings: params as
// '{"campaignID":"…"}', limit as "10", fields as "name,msisdn". The answers said "params must be an
// object of the operation's params", "limit must be a whole number from 1 to 500", and the model,
// whose value held just that, sent it again the same way. Now a string is named as the problem.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { textOf } from './helpers.js';
import { inProcessPerFile } from './helpers/in-process-per-file.js';

const file = inProcessPerFile('contact');

const answer = async (args: Record<string, unknown>) =>
  textOf((await file.server.client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', ...args } })) as CallToolResult);

describe('review35: an argument written as a string', () => {
  it.each([
    [
      { operationId: 'contact.byCampaign', params: '{"campaignID":"x"}' },
      'params must be an object of the operation’s params: a JSON object, not a string holding one.',
    ],
    [{ limit: '10' }, 'limit must be a whole number from 1 to 500: a JSON number, not a string holding one.'],
    [{ offset: '50' }, 'offset must be a whole number of at least 0: a JSON number, not a string holding one.'],
    [{ fields: 'name,msisdn' }, 'fields must be a list of at most 50 field names: a JSON array such as ["name", "email"], not a string holding one.'],
  ])('%j: said to be a string', async (args, message) => {
    file.sandbox.clearLogs();
    const text = await answer(args);
    expect(text).toContain(message);
    expect(text).toMatch(/Nothing was sent\.$/);
    expect(file.sandbox.requests()).toEqual([]);
  });

  it.each([[{ limit: 0 }], [{ params: [] }], [{ fields: [1] }]])('%j, not a string: no such words', async (args) => {
    expect(await answer(args)).not.toMatch(/not a string holding one/);
  });
});
