// Review 36 (the call path attacked). A list read given a field that is not in its params was
// pointed to the tool's search argument (review35 409d8ab), even where the field was the read's
// own path param misspelled (contact.byCampaign {campaignId}, the param is campaignID): the model
// was told to filter by campaignId in search, and a model that follows it drops the one param the
// read needs. Such a field is now pointed to the param it misspells; other fields keep the hint.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { textOf } from './helpers.js';
import { inProcessPerFile } from './helpers/in-process-per-file.js';

const file = inProcessPerFile('contact');

describe('review36: a list read given its own param misspelled', () => {
  it('contact.byCampaign {campaignId}: pointed to campaignID, not to search', async () => {
    file.sandbox.clearLogs();
    const text = textOf((await file.server.call('contact.byCampaign', { campaignId: 'CMP-1' })) as CallToolResult);
    expect(text).toContain('params.campaignId is not a field of this operation (did you mean params.campaignID?)');
    expect(text).not.toMatch(/search "campaignId/);
    expect(file.sandbox.requests()).toEqual([]);
  });

  it('a field the read has no param like is still pointed to search', async () => {
    const text = textOf((await file.server.call('contact.byCampaign', { campaignID: 'CMP-1', status: 'sent' })) as CallToolResult);
    expect(text).toContain('params.status is not a field of this operation (to filter the list, give search beside params: search "status:<value>")');
  });
});
