// Review 35 (the model's eye). "Find every contact tagged vip": a model put the filter in params
// (`contact.list` with params {tags: "vip"}) and was told only "params.tags is not a field of this
// operation. Expected params {}", and guessed on (tag, filter, where). Now a list read given such a
// field is pointed to the tool's search argument, with the field it named.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { textOf } from './helpers.js';
import { inProcessPerFile } from './helpers/in-process-per-file.js';

const file = inProcessPerFile('contact');

describe('review35: a filter given in params of a list read', () => {
  it('contact.list {tags: "vip"}: pointed to search "tags:<value>", and nothing is sent', async () => {
    file.sandbox.clearLogs();
    const result = (await file.server.call('contact.list', { tags: 'vip' })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(
      'params.tags is not a field of this operation (to filter the list, give search beside params: search "tags:<value>"). Expected params {}. Nothing was sent.',
    );
    expect(file.sandbox.requests()).toEqual([]);
  });

  it('a list argument in params keeps its own hint; a write is not told to search', async () => {
    expect(textOf((await file.server.call('contact.list', { limit: 5 })) as CallToolResult)).toContain(
      'params.limit is not a field of this operation (limit is an argument of the tool: give it beside operationId and params)',
    );
    const write = textOf((await file.server.call('contact.create', { name: 'A', msisdn: '081234567890', tags: ['vip'] })) as CallToolResult);
    expect(write).toContain('params.tags is not a field of this operation.');
    expect(write).not.toMatch(/search/);
  });
});
