// review40: campaigns whose name is empty or only blanks (a customer's, or what is left of one made
// of invisible characters the server takes out), in the dashboard's list, in Debian's Chromium
// through the test host (packages/apps/host), the built campaign server on a hostile API. The row
// had an empty name cell, so in a narrow frame nothing said which campaign it was, and its button
// was read out as "Show the progress of " (of nothing). Such a row is named by its id, as a row
// without a name already was.
import { describe, expect, it } from 'vitest';
import { dashboardOnHostileApi } from './helpers/dashboard-on-hostile-api.js';
import { envelope } from './hostile-api.js';

const file = dashboardOnHostileApi();

const EMPTY = 'c0ffee00000000000000000e';
const BLANKS = 'c0ffee00000000000000000b';

describe('review40: a campaign named with nothing but blanks', { timeout: 60_000 }, () => {
  it('is named by its id in the list, and so is its Progress button', async () => {
    file.api.respond(() =>
      envelope([
        { _id: EMPTY, name: '', status: 'draft', channel: 'sms', totalRecipients: 5, sentCount: 0 },
        { _id: BLANKS, name: '   ', status: 'draft', channel: 'sms', totalRecipients: 5, sentCount: 0 },
      ]),
    );
    const view = await file.show({ operationId: 'campaign.list' }, { width: 320 });
    await view.view.locator('table').waitFor();
    expect(await view.view.locator('td.name').allTextContents()).toEqual([EMPTY, BLANKS]);
    await view.view.getByRole('button', { name: `Show the progress of ${EMPTY}` }).waitFor();
    await view.view.getByRole('button', { name: `Show the progress of ${BLANKS}` }).waitFor();
  });
});
