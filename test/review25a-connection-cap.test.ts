// Open TCP connections against the remote service: one client holding idle sockets (no key, nothing
// sent) must not take every connection the service can hold without the service saying so. Over
// ENGAGE_HTTP_MAX_CONNECTIONS a new connection's request is answered 503 with Retry-After (a client
// reads why) and its socket closed; ENGAGE_HTTP_MAX_CONNECTIONS_PER_ADDRESS caps one address and not
// another (127.0.0.2 is another address on Linux loopback); probes still answer; refusals are logged
// once per burst; both settings are read from the environment like the others.
import { connect } from 'node:net';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import type { Service, ServiceOptions } from '../packages/http/src/service.js';
import { rawClientsPerTest } from './raw-clients.js';
import { readHttpSettings } from '../packages/http/src/settings.js';

let sandbox: Sandbox;
let service: Service | undefined;
const { sockets, logs, serve: start } = rawClientsPerTest((started) => (sandbox = started));
const serve = async (overrides: Partial<ServiceOptions>) => (service = await start(overrides));

/** Idle sockets that never send a byte, held open; resolved once the service counts them all. */
async function hold(count: number, localAddress = '127.0.0.1'): Promise<void> {
  const { port } = new URL((service as Service).url);
  for (let i = 0; i < count; i++) {
    await new Promise<void>((resolve, reject) => {
      const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress }, () => resolve());
      socket.on('error', reject);
      sockets.push(socket);
    });
  }
  await until(async () => (await openConnections()) >= count);
}

async function openConnections(): Promise<number> {
  return new Promise((resolve) => (service as Service).server.getConnections((_error, count) => resolve(count)));
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request on a new connection (no agent: never a pooled socket) from `localAddress`. */
async function ask(path: string, localAddress = '127.0.0.1'): Promise<Answer> {
  const url = new URL(path, (service as Service).url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        agent: false,
        localAddress,
        method: 'POST',
        headers: {
          authorization: `Bearer ${sandbox.keys.full}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(path.startsWith('/mcp') ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) : undefined);
  });
}

/** The request reached the MCP face (its JSON-RPC answer, whatever it says), not a connection refusal. */
function expectServed(answer: Answer): void {
  expect(answer.status).not.toBe(503);
  expect(JSON.parse(answer.body).jsonrpc).toBe('2.0');
}

describe('a cap on open connections', () => {
  it('answers 503 with Retry-After over ENGAGE_HTTP_MAX_CONNECTIONS, logs the burst once, and serves again when sockets close', async () => {
    await serve({ maxConnections: 6 });
    await hold(6);
    const refused = await Promise.all([ask('/mcp/contact'), ask('/mcp/contact'), ask('/mcp/contact')]);
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('5');
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body).error).toBe('too_many_connections');
    }
    // The probes still answer (a balancer must not think the service dead).
    expect((await ask('/readyz')).status).not.toBe(503);
    expect(logs.filter((line) => line.includes('refusing connections over')).length).toBe(1);
    for (const socket of sockets.splice(0)) socket.destroy();
    await until(async () => (await openConnections()) === 0);
    expectServed(await ask('/mcp/contact'));
  });

  it('caps one address with ENGAGE_HTTP_MAX_CONNECTIONS_PER_ADDRESS, and not another', async () => {
    await serve({ maxConnectionsPerAddress: 4 });
    await hold(4, '127.0.0.1');
    expect((await ask('/mcp/contact', '127.0.0.1')).status).toBe(503);
    expectServed(await ask('/mcp/contact', '127.0.0.2'));
  });

  it('holds sockets under the default caps as it did (no refusal for a normal host)', async () => {
    await serve({});
    await hold(200);
    expectServed(await ask('/mcp/contact'));
  });
});

describe('the settings', () => {
  it('reads ENGAGE_HTTP_MAX_CONNECTIONS and ENGAGE_HTTP_MAX_CONNECTIONS_PER_ADDRESS as bounded whole numbers', () => {
    const read = readHttpSettings({ ENGAGE_HTTP_MAX_CONNECTIONS: '500', ENGAGE_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '50' });
    expect(read.ok && read.settings.maxConnections).toBe(500);
    expect(read.ok && read.settings.maxConnectionsPerAddress).toBe(50);
    const bad = readHttpSettings({ ENGAGE_HTTP_MAX_CONNECTIONS: 'lots' });
    expect(bad.ok ? [] : bad.problems).toContain('ENGAGE_HTTP_MAX_CONNECTIONS must be a whole number from 0 to 1000000.');
  });

  it('refuses a per-address cap behind a proxy (every connection is the proxy address)', () => {
    const read = readHttpSettings({ ENGAGE_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '50', ENGAGE_TRUSTED_PROXY_HOPS: '1' });
    expect(read.ok ? [] : read.problems.join(' ')).toMatch(/ENGAGE_HTTP_MAX_CONNECTIONS_PER_ADDRESS is set with ENGAGE_TRUSTED_PROXY_HOPS/);
  });
});
