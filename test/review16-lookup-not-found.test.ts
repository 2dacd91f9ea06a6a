// Review 16: a preview of product.delete (or update) for an id the API does not know said
// "Product: could not be read now (the API did not answer the look-up)": the API did answer, with
// a 404, and the model and the person were told it was silent. A record missing from a list said
// only "not in what the API lists now", leaving the model to ask the person about an id that is
// likely wrong. The preview now says the look-up failed (true of a 404 and of no answer) and that
// a record not listed may be a wrong id.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

describe('a preview tells the truth about a record it could not show', () => {
  it('product.delete of an unknown id: the look-up failed, not "the API did not answer"', async () => {
    const server = await serve('product.delete');
    const preview = await server.call('product.delete', { productID: 'no-such-product' });
    expect(structuredOf(preview).outcome).toBe('preview');
    expect(textOf(preview)).not.toMatch(/did not answer/);
    expect(structuredOf(preview).preview).toMatch(/Product: could not be read now \(the look-up failed\)[^\n]*Check it before agreeing/);
    expect(sandbox.requests().some((request) => request.status === 404)).toBe(true);
  });

  it('contact.delete of an id not in the list: the id may be wrong, said before the person is asked', async () => {
    const server = await serve('contact.delete');
    const preview = await server.call('contact.delete', { id: 'no-such-contact' });
    expect(structuredOf(preview).preview).toContain('- Contact: not in what the API lists now (the id may be wrong: check it before asking the user).');
  });
});
