// Review 36 (remote): review35 put the locks of keys the API has not accepted (a call whose
// arguments held a window of its key) in a room of their own, which kept, as the core's does, no
// new lock once 100,000 live ones filled it. A tenant's key is in that room too until this replica
// has seen the API answer it (a replica just started, or one the balancer had not sent it to): its
// first call holding the key (pasted into the chat) was refused, and the lock not kept, so every
// later call with the exposed key ran, for as long as made-up keys kept the room full. The oldest
// lock of that room now gives way to a new one.
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

describe("made-up keys' locks, and the key of a tenant this replica has not seen yet", () => {
  it('is locked when its first call holds it, however many made-up keys locked themselves first', { timeout: 60_000 }, async () => {
    const checked = vi.spyOn(KeyGuesses.prototype, 'locked');
    const attacker = await client('made-up-key-0123456789abcdefghij');
    expect(textOf((await attacker.callTool(LIST())) as never)).toMatch(/401/);
    const guesses = checked.mock.contexts[0] as KeyGuesses;
    checked.mockRestore();
    // 100,000 made-up keys each sending a window of itself (no API request), at the locks.
    for (let at = 0; at < 100_000; at++) guesses.lock(keyFingerprint(`made-up-${at}`));
    // A tenant's first call on this replica, the key pasted into the chat: refused, and so is every later one.
    const tenant = await client(file.sandbox.keys.otherTenant);
    expect(textOf((await tenant.callTool(LIST(file.sandbox.keys.otherTenant))) as never)).toMatch(/arguments hold the API key/);
    expect(textOf((await tenant.callTool(LIST())) as never)).toMatch(/every call made with it is refused for an hour/);
  });
});
