// A grant lives as long as its newest refresh token (30 days from each refresh), but the list of a
// key's grants (keygrants:<index>: the connections page, and revokeAllOfKey when the API refuses
// the key) was given 30 days once, at the code exchange, and never again. A connection still in
// use after that was missing from the page, so the key holder could neither see nor revoke it.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Grants } from '../packages/http/src/oauth/grants.js';
import { MemoryOAuthStore } from '../packages/http/src/oauth/store.js';

const DAY = 24 * 60 * 60 * 1000;

afterEach(() => {
  vi.useRealTimers();
});

describe("a key's list of grants", () => {
  it('keeps a grant that is still refreshed after 30 days', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
    const grants = new Grants(new MemoryOAuthStore(), randomBytes(32));
    const tenantKey = 'tk_review7_lifetime_0123456789';
    const grant = await grants.create({ clientId: 'client-1', clientName: 'App', scopes: ['contact.read'], resource: 'https://mcp.example/mcp', tenantKey });
    let tokens = await grants.issueFirst(grant);
    for (let day = 20; day <= 60; day += 20) {
      vi.setSystemTime(new Date(Date.parse('2030-01-01T00:00:00Z') + day * DAY));
      const outcome = await grants.refresh(tokens?.refresh_token ?? '', 'client-1');
      expect(outcome.ok).toBe(true);
      tokens = outcome.ok ? outcome.tokens : undefined;
    }
    expect((await grants.ofKey(tenantKey)).map((each) => each.id)).toEqual([grant.id]);
    expect(await grants.revokeAllOfKey(tenantKey)).toBe(1);
    expect(await grants.openAccess(tokens?.access_token ?? '')).toBeUndefined();
  });
});
