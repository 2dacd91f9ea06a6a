// Remote mode's limits on 2025-era sessions (100 a key, 10,000 in all) were fixed in the code: an
// operator whose agents keep more sessions with one key, or a small replica that should hold fewer,
// could not change them. ENGAGE_HTTP_MAX_SESSIONS_PER_KEY and ENGAGE_HTTP_MAX_SESSIONS set them,
// read and bounded like the other settings; checked here through the built service's CLI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readHttpSettings } from '../packages/http/src/settings.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { launchService, stopService, type ServiceProcess } from './service-process.js';

let sandbox: Sandbox;
let service: ServiceProcess;
let url: string;
beforeAll(async () => {
  sandbox = await startSandbox();
  service = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_HTTP_MAX_SESSIONS_PER_KEY: '2', ENGAGE_HTTP_MAX_SESSIONS: '3' });
  url = await service.url;
});
afterAll(async () => {
  if (service) await stopService(service.child);
  await sandbox?.close();
});

const headers = (key: string, session?: string) => ({
  authorization: `Bearer ${key}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
});

/** A 2025 session of `key` on /mcp/billing: its id, or the refusal's status and body. */
async function openSession(key: string): Promise<{ id?: string; status: number; body: string }> {
  const response = await fetch(new URL('/mcp/billing', url), {
    method: 'POST',
    headers: headers(key),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'limits', version: '0' } },
    }),
  });
  const id = response.headers.get('mcp-session-id') ?? undefined;
  return { ...(id ? { id } : {}), status: response.status, body: await response.text() };
}

/** A billing.quota call in the session (its first call makes the key one the API accepted): the HTTP status. */
async function callIn(key: string, session: string): Promise<number> {
  const response = await fetch(new URL('/mcp/billing', url), {
    method: 'POST',
    headers: headers(key, session),
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'billing_get', arguments: { operationId: 'billing.quota' } } }),
  });
  await response.text();
  return response.status;
}

describe('ENGAGE_HTTP_MAX_SESSIONS_PER_KEY and ENGAGE_HTTP_MAX_SESSIONS', () => {
  it("a key's third session ends its least recently used; a fourth session in all is refused 503", async () => {
    const key = sandbox.keys.full;
    const [first, second] = [await openSession(key), await openSession(key)];
    expect(await callIn(key, first.id as string)).toBe(200);
    expect(await callIn(key, second.id as string)).toBe(200);
    const third = await openSession(key);
    expect(third.status).toBe(200);
    expect(await callIn(key, third.id as string)).toBe(200);
    // The first was the least recently used: ended, and its id no longer answers.
    expect(await callIn(key, first.id as string)).toBe(404);
    expect(await callIn(key, second.id as string)).toBe(200);

    // Another tenant's key: one session (3 in all), accepted by its first call; a second is over ENGAGE_HTTP_MAX_SESSIONS.
    const other = sandbox.keys.otherTenant;
    const theirs = await openSession(other);
    expect(await callIn(other, theirs.id as string)).toBe(200);
    const over = await openSession(other);
    expect(over.status).toBe(503);
    expect(over.body).toMatch(/too_many_sessions/);
  });

  it('are read as bounded whole numbers; anything else refuses the start, naming the setting', () => {
    const read = readHttpSettings({ ENGAGE_HTTP_MAX_SESSIONS: '20000', ENGAGE_HTTP_MAX_SESSIONS_PER_KEY: '500' });
    expect(read.ok && read.settings).toMatchObject({ maxSessions: 20_000, maxSessionsPerKey: 500 });
    const defaults = readHttpSettings({});
    expect(defaults.ok && defaults.settings).toMatchObject({ maxSessions: 10_000, maxSessionsPerKey: 100 });
    for (const [name, value] of [
      ['ENGAGE_HTTP_MAX_SESSIONS', '0'],
      ['ENGAGE_HTTP_MAX_SESSIONS_PER_KEY', 'lots'],
    ] as const) {
      const bad = readHttpSettings({ [name]: value });
      expect(bad.ok).toBe(false);
      expect(!bad.ok && bad.problems.join(' ')).toContain(name);
    }
  });
});
