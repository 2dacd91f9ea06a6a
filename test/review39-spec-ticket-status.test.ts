// The spec does not give the ticket statuses ("Allowed values of the {status} path parameter: not
// shown"). What the model reads of inbox.ticket.byStatus (its line in the tool description, and the
// shape a refusal of its params shows) names no status as if the API's, and sends it to the values
// inbox.ticket.list shows: a guessed "open" the API spells otherwise could come back as an empty
// list, read as "no such tickets".
import { describe, expect, it } from 'vitest';
import { describeTool, manifestOf } from '@engage-mcp/shared';
import { paramShape } from '../shared/src/model/manifest.js';
import { DOMAINS } from './helpers.js';

/** The sandbox's guesses (README, "The sandbox"), and the usual others. */
const GUESSED_STATUS = /\b(open|pending|closed|resolved|new)\b/i;

describe('inbox.ticket.byStatus and the statuses the spec does not show', () => {
  const inbox = DOMAINS.inbox!;
  const op = inbox.operations.find((candidate) => candidate.id === 'inbox.ticket.byStatus')!;

  it('its line in the description names no status value, and where the values are', () => {
    const read = manifestOf(inbox).tools.find((tool) => tool.name === 'inbox_read')!;
    const line = describeTool(read, read.operations, () => false)
      .split('\n')
      .find((text) => text.startsWith('- inbox.ticket.byStatus '));
    expect(line).toBeDefined();
    expect(line).not.toMatch(GUESSED_STATUS);
    expect(line).toContain('inbox.ticket.list');
  });

  it('the status param is described the same way', () => {
    const shape = paramShape(op);
    expect(shape).not.toMatch(GUESSED_STATUS);
    expect(shape).toMatch(/status: [^;}]*inbox\.ticket\.list/);
  });
});
