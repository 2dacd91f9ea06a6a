// Review 16: a host whose person answered the confirmation question, but whose answer could not
// be read (accept without the confirm field, a malformed result), got a preview that began "The
// confirmation question could not be shown.": the model would tell the person their host failed
// to show it, while they had just seen and answered it. Such an answer is now a no, answered at
// once and said as what it is (design.md: a question that came back malformed is a no), in both
// eras alike.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

describe('a question whose answer could not be read is a no, and is not said to be unshown', () => {
  it.each(['v1', 'v2-legacy', 'v2-modern'] as const)(
    '%s: an accept without the confirm field: nothing runs, no token, said as unread or not a yes',
    async (kind) => {
      const server = await serve('contact.delete', { kind, elicit: () => ({ action: 'accept', content: {} }) });
      const result = await server.call('contact.delete', { id: sandbox.tenant('A').contacts[0]!._id });
      expect(structuredOf(result).outcome, textOf(result)).toBe('declined');
      expect(structuredOf(result).confirmationToken).toBeUndefined();
      expect(textOf(result)).not.toMatch(/could not be shown/);
      expect(textOf(result)).toMatch(/was not run, and nothing was changed/);
      expect(countCarriedOut(sandbox, 'contact.delete')).toBe(0);
    },
  );
});
