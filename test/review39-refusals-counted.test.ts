// README: /metrics counts "refusals by reason". Those the guards made were counted; those made
// later on the MCP face (a 2025 session not found, a JSON-RPC batch, a session place, an id in use,
// the confirmation budget) and a connection over the cap were not: an operator watching
// engage_http_refused_total saw nothing while clients were turned away (noticed by review39-newcomer).
import { connect } from 'node:net';
import { expect, it } from 'vitest';
import { servicePerFile } from './helpers/service-per-file.js';

const file = servicePerFile({ maxConnections: 1 });
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function refusedCount(metrics: string, reason: string): number {
  return Number(new RegExp(`engage_http_refused_total\\{reason="${reason}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
}

it('refusals on the MCP face and connections over the cap are counted by reason', async () => {
  const { service, sandbox } = file;
  const auth = { ...HEADERS, authorization: `Bearer ${sandbox.keys.full}`, connection: 'close' };
  const body = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
  const unknownSession = await fetch(`${service.url}/mcp/contact`, {
    method: 'POST',
    headers: { ...auth, 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify(body(1)),
  });
  expect(unknownSession.status).toBe(404);
  const batch = await fetch(`${service.url}/mcp/contact`, {
    method: 'POST',
    headers: { ...auth, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify([body(1), body(2)]),
  });
  expect(batch.status).toBe(400);
  // One connection held open: the next is over the cap of 1.
  const held = connect(Number(new URL(service.url).port), '127.0.0.1');
  await new Promise((resolve) => held.once('connect', resolve));
  try {
    await expect.poll(async () => refusedCount(await service.metrics.render(), 'too_many_connections'), { timeout: 5_000 }).toBe(0);
    const over = await fetch(`${service.url}/healthz`).catch(() => undefined);
    await over?.text();
  } finally {
    held.destroy();
  }
  const metrics = await service.metrics.render();
  expect(refusedCount(metrics, 'session_not_found')).toBe(1);
  expect(refusedCount(metrics, 'batch_refused')).toBe(1);
  expect(refusedCount(metrics, 'too_many_connections')).toBeGreaterThanOrEqual(1);
});
