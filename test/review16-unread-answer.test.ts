// Review 16: a host whose person answered the confirmation question, but whose answer could not
// be read (accept without the confirm field, a malformed result), got a preview that began "The
// confirmation question could not be shown.": the model would tell the person their host failed
// to show it, while they had just seen and answered it. The reason now covers both.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

describe('a question whose answer could not be read is not said to be unshown', () => {
  it('an accept without the confirm field: a preview that says the answer could not be read; nothing runs', async () => {
    const server = await serve('contact.delete', { kind: 'v1', elicit: () => ({ action: 'accept', content: {} }) });
    const result = await server.call('contact.delete', { id: sandbox.tenant('A').contacts[0]!._id });
    expect(structuredOf(result).outcome).toBe('preview');
    expect(textOf(result)).toMatch(/^The confirmation question could not be shown, or its answer could not be read\.\n/);
    expect(countCarriedOut(sandbox, 'contact.delete')).toBe(0);
  });
});
