// Review 40 (the model's eye). "Why did last week's campaign fail for so many people?": a model
// gave campaign.analytics the campaign's id, was told only "params.id is not a field of this
// operation. Expected params {}", dropped the id, and gave the person the summary's failed count as
// that campaign's. Now a read that takes no params, given one, says nothing given narrows its
// answer; reads with params, list reads and writes are answered as before.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { textOf } from './helpers.js';
import { inProcessPerFile } from './helpers/in-process-per-file.js';

const file = inProcessPerFile('campaign');
const HINT = 'takes no params: nothing given narrows its answer to one record or period';

describe('review40: a read that takes no params, given one', () => {
  it('campaign.analytics {id}: says nothing narrows its answer, and nothing is sent', async () => {
    file.sandbox.clearLogs();
    const text = textOf((await file.server.call('campaign.analytics', { id: 'ba2e61e6fda5c8b4cc7d4e6e' })) as CallToolResult);
    expect(text).toContain(`params.id is not a field of this operation (campaign.analytics ${HINT}). Expected params {}. Nothing was sent.`);
    expect(file.sandbox.requests()).toEqual([]);
  });

  it('given several, it is said once, after them all', async () => {
    const text = textOf((await file.server.call('campaign.analytics', { id: 'x', week: 47, month: 11 })) as CallToolResult);
    expect(text).toContain(
      `params.id is not a field of this operation; params.week is not a field of this operation; params.month is not a field of this operation (campaign.analytics ${HINT}).`,
    );
    expect(text.split(HINT)).toHaveLength(2);
  });

  it('a list read, a read with params and a write are not told so', async () => {
    const list = textOf((await file.server.call('campaign.list', { status: 'completed' })) as CallToolResult);
    expect(list).toContain('search "status:<value>"');
    const progress = textOf((await file.server.call('campaign.progress', { id: 'x', week: 47 })) as CallToolResult);
    const cancel = textOf((await file.server.call('campaign.cancel', { id: 'x', reason: 'opt-out' })) as CallToolResult);
    for (const text of [list, progress, cancel]) expect(text).not.toContain(HINT);
    expect(progress).toContain('params.week is not a field of this operation.');
  });
});
