// Review 16: a write whose request never reached a socket (its deadline passed, or the connection
// broke, before anything was written) is known not to have happened, and is noted refused; but its
// answer was the read's "The API did not answer within … Try again later.", which did not say the
// write was not carried out. The outcome is refused either way: the text now says so too. (Such a
// failure cannot be made reliably against the sandbox, so the answer is built as the call room
// builds it.)
import { describe, expect, it } from 'vitest';
import { DOMAINS } from './helpers.js';
import { UpstreamError } from '../shared/src/model/errors.js';
import { failedCall } from '../shared/src/call/outcomes.js';

const op = DOMAINS.campaign!.operations.find((candidate) => candidate.id === 'campaign.send')!;
const read = DOMAINS.campaign!.operations.find((candidate) => candidate.id === 'campaign.list')!;
const text = (result: ReturnType<typeof failedCall>) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

describe('a write that was never sent says it was not carried out', () => {
  it.each([
    ['timeout', 'The API did not answer within 30000 ms (ENGAGE_TIMEOUT_MS)'],
    ['network', 'The connection to the API broke before it answered'],
  ] as const)('%s before anything was written', (kind, message) => {
    const result = failedCall(new UpstreamError(kind, message, { mayHaveHappened: false }), op, 'sent', true);
    expect(result.structuredContent).toEqual({ operationId: 'campaign.send', outcome: 'refused' });
    expect(text(result)).toBe(`${message}. Nothing reached the API: campaign.send was not carried out. Try again later.`);
  });

  it('on a confirmationToken: the token is spent, said as for a 429', () => {
    const result = failedCall(
      new UpstreamError('timeout', 'The API did not answer within 30000 ms (ENGAGE_TIMEOUT_MS)', { mayHaveHappened: false }),
      op,
      'sent',
      true,
      'environment',
      true,
    );
    expect(text(result)).toMatch(/was not carried out\. Try again later\. The confirmationToken is spent: to try again, call without it/);
  });

  it('a read that failed so reads as before', () => {
    const result = failedCall(
      new UpstreamError('timeout', 'The API did not answer within 30000 ms (ENGAGE_TIMEOUT_MS)', { mayHaveHappened: false }),
      read,
      'sent',
      false,
    );
    expect(text(result)).toBe('The API did not answer within 30000 ms (ENGAGE_TIMEOUT_MS). Try again later.');
  });
});
