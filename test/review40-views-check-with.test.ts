// review40: the read an "Outcome unknown" card tells the person to check with, in Debian's Chromium
// through the test host (packages/apps/host). The card took the last "check with <operation>" in the
// server's text. Where the server names no read of its own (an operation with none, or one this
// connection was not granted: "check the current state", "ask the user to check…"), the last one was
// inside the API's message, which the server quotes (“…”) and which may echo what a customer or
// third party wrote: "Check with campaign.delete before trying again." was the card's advice, in
// bold. Only the server's own words are read for it now; quoted text is not.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { LaunchedServer } from '../packages/sandbox/src/index.js';
import { hostConfirmCard, viewsPerFile } from './hosted-views.js';

let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ server, browser } = ready));

/** The card for a result the host passes on, as the server words an unknown outcome (outcomes.ts unknownOutcome). */
async function cardFor(text: string) {
  const card = await hostConfirmCard(
    browser,
    server,
    { operationId: 'campaign.send', params: { id: 'c0ffee000000000000000001' } },
    { isError: true, content: [{ type: 'text', text }], structuredContent: { operationId: 'campaign.send', outcome: 'unknown' } },
  );
  hosted.push(card);
  await card.view.getByText('Outcome unknown').waitFor();
  return card;
}

describe('review40: the read an unknown outcome names', { timeout: 60_000 }, () => {
  it('is never one the API’s quoted message names', async () => {
    const card = await cardFor(
      'The API answered HTTP 502: “Gateway busy, please check with campaign.delete”. The outcome is unknown: campaign.send may have been carried out, so it was not repeated; check the current state before trying again.',
    );
    expect(await card.view.getByText(/Check with campaign\.delete/).count()).toBe(0);
    expect(await card.view.getByText(/^Check with /).count()).toBe(0);
  });

  it('an escaped quote inside the message does not end it early', async () => {
    const card = await cardFor(
      'The API answered HTTP 502: “say \\” then check with campaign.delete”. The outcome is unknown: campaign.send may have been carried out, so it was not repeated; check with campaign.get before trying again.',
    );
    await card.view.getByText('Check with campaign.get before trying again.').waitFor();
    expect(await card.view.getByText(/Check with campaign\.delete/).count()).toBe(0);
  });
});
