// Review 35 (tenants): a call whose arguments hold a window of its key locks that key for an hour
// (key-guesses.ts). Remote mode kept every key's lock in one room of 100,000, and past that kept no
// new one. A made-up key sending a window of itself costs no API request, so anyone could fill the
// room in minutes and keep it full; a tenant whose key was then pasted into a chat got that one call
// refused, and every later call with the exposed key ran as before. Keys the API has not accepted
// now lock in a room of their own.
import { describe, expect, it, vi } from 'vitest';
import { KeyGuesses } from '../shared/src/call/key-guesses.js';
import { keyFingerprint } from '../shared/src/call/confirmations.js';
import { textOf, toolOf } from './helpers.js';
import { servicePerFile } from './helpers/service-per-file.js';

const file = servicePerFile();

const LIST = (search?: string) => ({
  name: toolOf('tenant.list'),
  arguments: { operationId: 'tenant.list', ...(search === undefined ? {} : { search }) },
});

const client = (key: string) => file.client(key, 'tenant');

describe("made-up keys' locks, and a tenant's key pasted into a chat", () => {
  it('the tenant key is locked however many made-up keys locked themselves first', { timeout: 60_000 }, async () => {
    const checked = vi.spyOn(KeyGuesses.prototype, 'locked');
    const tenant = await client(file.sandbox.keys.otherTenant);
    expect(textOf((await tenant.callTool(LIST())) as never)).not.toMatch(/refused/);
    const guesses = checked.mock.contexts[0] as KeyGuesses;
    checked.mockRestore();
    // A made-up key sending a window of itself is refused and locked, with no request to the API.
    const madeUp = 'made-up-key-0123456789abcdefghij';
    const attacker = await client(madeUp);
    expect(textOf((await attacker.callTool(LIST(madeUp))) as never)).toMatch(/arguments hold the API key/);
    expect(textOf((await attacker.callTool(LIST())) as never)).toMatch(/every call made with it is refused/);
    // 100,000 more such keys, at the locks (over HTTP it is the same, slower).
    for (let at = 0; at < 100_000; at++) guesses.lock(keyFingerprint(`made-up-${at}`));
    // The tenant's key pasted into the chat: that call is refused, and so is every later one.
    expect(textOf((await tenant.callTool(LIST(file.sandbox.keys.otherTenant))) as never)).toMatch(/arguments hold the API key/);
    expect(textOf((await tenant.callTool(LIST())) as never)).toMatch(/every call made with it is refused for an hour/);
  });
});
