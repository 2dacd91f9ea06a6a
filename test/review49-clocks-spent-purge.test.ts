// Review 49 (clocks): a confirmation expires by the system clock or by the process's forward clock
// plus the lead it carries (c35e01f). The embedded spent store (MemorySpentStore), once full, drops
// the nonces whose value has expired, by the system clock alone: a value issued while that clock
// led (its clock set back before) was dropped once the system clock passed its expiry, yet a clock
// set back again made it good once more by both clocks, and it was honoured a second time.
// A nonce is now kept until its value is past both.
import { expect, it } from 'vitest';
import { Confirmations, MemorySpentStore } from '../shared/src/call/confirmations.js';

const MINUTE = 60_000;
const T = 2_200_000_000_000;

it('a spent value issued while the forward clock led is not honoured again after the store was purged and the clock set back', async () => {
  let now = T;
  let forward = T + 60 * MINUTE; // the system clock was set back an hour before the preview
  const store = new MemorySpentStore(() => forward, 2);
  const confirmations = new Confirmations({ secret: new Uint8Array(32).fill(7), store, now: () => now, forward: () => forward });
  const led = confirmations.issue('token', 'key', 'campaign.send', { id: 'a' }).value;
  expect(await confirmations.redeem('token', led, 'key', 'campaign.send', { id: 'a' })).toBe('ok');
  forward = now; // (an issuer with no lead)
  const plain = confirmations.issue('token', 'key', 'campaign.send', { id: 'b' }).value;
  expect(await confirmations.redeem('token', plain, 'key', 'campaign.send', { id: 'b' })).toBe('ok');
  // Six minutes on: both values past their expiry by the system clock; the store is full, and a third spend purges it.
  now = T + 6 * MINUTE;
  forward = T + 60 * MINUTE + 3 * MINUTE; // half rate while ahead
  const third = confirmations.issue('token', 'key', 'campaign.send', { id: 'c' }).value;
  expect(await confirmations.redeem('token', third, 'key', 'campaign.send', { id: 'c' })).toBe('ok');
  // The system clock set back three minutes: the led value is good again by both clocks, and already spent.
  now = T + 3 * MINUTE;
  forward += 1;
  expect(await confirmations.redeem('token', led, 'key', 'campaign.send', { id: 'a' })).toBe('spent');
});
