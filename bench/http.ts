// `npm run bench -- --only http` (or `tsx bench/http.ts`): remote mode's throughput and latency.
// The built service (packages/http/dist/cli.js) and the sandbox run as their own processes; this
// process drives N concurrent clients calling billing.quota through MCP over HTTP (the v2 SDK
// client, pinned to 2026-07-28, so stateless; the v1 client over a 2025 session; and, for the
// server's own cost, the v2 client's captured request replayed by a bare HTTP client), and the
// same request straight to the sandbox, at 1, 16 and 64 clients, in one run. (All clients use one
// key, and a key holds at most 100 2025 sessions: beyond that a new session closes the least
// recently used one, so the v1 series cannot go above 100 clients; BENCH_HTTP_LEVELS sets others.)
// Measures only; nothing here passes or fails. BENCH_HTTP_CALLS sets the calls per client (default 150).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { Client as ModernClient, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const LEVELS = (process.env.BENCH_HTTP_LEVELS ?? '1,16,64').split(',').map(Number);
const CALLS_PER_CLIENT = Number(process.env.BENCH_HTTP_CALLS ?? 150);
const MIN_CALLS = 2_000;
/** BENCH_HTTP_SIDES: which series to run (default all three), e.g. "direct,modern" while profiling one. */
const SIDES = (process.env.BENCH_HTTP_SIDES ?? 'direct,modern,legacy,replay').split(',') as Array<keyof HttpResults>;

export interface HttpSeries {
  clients: number;
  calls: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time the service process (for direct: the sandbox) spent per call: a figure other load on the machine does not move much. */
  cpuMsPerCall: number;
}
export type HttpResults = Record<'direct' | 'modern' | 'legacy' | 'replay', HttpSeries[]>;

export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (position - low);
}

export async function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`exited with ${code} before it was ready`)));
  });
}

/** CPU time (user + system) a process has used, in ms, from /proc. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (100 Hz)
}

/** `clients` workers, each making calls one after another until `total` calls were made; every call timed, with the server's CPU (`readCpuMs`) over the run. */
export async function drive(
  clients: Array<() => Promise<unknown>>,
  total: number,
  readCpuMs: () => number,
): Promise<{ times: number[]; seconds: number; cpuMs: number }> {
  const times: number[] = [];
  let left = total;
  const cpuBefore = readCpuMs();
  const started = performance.now();
  await Promise.all(
    clients.map(async (call) => {
      while (left-- > 0) {
        const at = performance.now();
        await call();
        times.push(performance.now() - at);
      }
    }),
  );
  return { times, seconds: (performance.now() - started) / 1000, cpuMs: readCpuMs() - cpuBefore };
}

export async function benchHttp(): Promise<HttpResults> {
  const sandbox = spawn(process.execPath, [join(root, 'packages/sandbox/dist/cli.js'), '--port', '0', '--rate-limit', '100000000'], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const { baseUrl, keys } = JSON.parse(await firstLine(sandbox)) as { baseUrl: string; keys: { full: string } };
  const key = keys.full;
  // The service as it ships: defaults (info logs, to a stderr nobody reads here), a limit per key above the bench's.
  // BENCH_HTTP_NODE_ARGS: e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the service.
  const nodeArgs = (process.env.BENCH_HTTP_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const service = spawn(process.execPath, [...nodeArgs, join(root, 'packages/http/dist/cli.js')], {
    env: { PATH: process.env.PATH ?? '', ENGAGE_BASE_URL: baseUrl, ENGAGE_HTTP_PORT: '0', ENGAGE_HTTP_MAX_CONCURRENT_PER_KEY: '1000' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const { url } = JSON.parse(await firstLine(service)) as { url: string };
  const endpoint = new URL('/mcp/billing', url);
  const headers = { authorization: `Bearer ${key}` };
  const results: HttpResults = { direct: [], modern: [], legacy: [], replay: [] };
  // The server's own cost, as the stdio section measures it with a bare client: the exact HTTP
  // request the v2 client sends for this call (captured once, not written here), replayed over a
  // keep-alive pool. A 2026-07-28 request stands alone, so the same bytes can be sent again.
  let captured: { headers: Record<string, string>; body: string } | undefined;
  const capturing = new ModernClient({ name: 'bench', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await capturing.connect(
    new V2HttpTransport(endpoint, {
      requestInit: { headers },
      fetch: async (input, init) => {
        const body = typeof init?.body === 'string' ? init.body : undefined;
        if (body?.includes('"tools/call"')) captured = { headers: Object.fromEntries(new Headers(init?.headers).entries()), body };
        return fetch(input, init);
      },
    }),
  );
  await capturing.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } });
  await capturing.close();
  if (!captured) throw new Error('the tools/call request was not captured');
  const request = captured;
  const summary = (clients: number, { times, seconds, cpuMs: cpu }: { times: number[]; seconds: number; cpuMs: number }): HttpSeries => ({
    clients,
    calls: times.length,
    callsPerSecond: times.length / seconds,
    p50Ms: quantile(times, 0.5),
    p99Ms: quantile(times, 0.99),
    cpuMsPerCall: cpu / times.length,
  });
  const args = { name: 'billing_get', arguments: { operationId: 'billing.quota' } };
  try {
    for (const level of LEVELS) {
      const total = Math.max(MIN_CALLS, level * CALLS_PER_CLIENT);
      // Direct: one keep-alive connection per client, as each MCP client has.
      const pool = new Pool(baseUrl, { connections: level });
      const direct = async () => {
        const response = await pool.request({ path: '/api/ai/v1/quota', method: 'GET', headers: { 'x-api-key': key } });
        JSON.parse(await response.body.text());
      };
      const modern = await Promise.all(
        Array.from({ length: level }, async () => {
          const client = new ModernClient({ name: 'bench', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
          await client.connect(new V2HttpTransport(endpoint, { requestInit: { headers } }));
          return client;
        }),
      );
      const legacy = await Promise.all(
        Array.from({ length: level }, async () => {
          const client = new V1Client({ name: 'bench', version: '0' });
          await client.connect(new V1HttpTransport(endpoint, { requestInit: { headers } }));
          return client;
        }),
      );
      const mcpPool = new Pool(url, { connections: level });
      const replay = async () => {
        const response = await mcpPool.request({ path: endpoint.pathname, method: 'POST', headers: request.headers, body: request.body });
        const text = await response.body.text();
        if (response.statusCode !== 200 || !text.includes('"result"')) throw new Error(`replay answered ${response.statusCode}: ${text.slice(0, 200)}`);
      };
      const series = {
        direct: () => Array.from({ length: level }, () => direct),
        replay: () => Array.from({ length: level }, () => replay),
        modern: () => modern.map((client) => () => client.callTool(args)),
        legacy: () => legacy.map((client) => () => client.callTool(args)),
      };
      // Warm up each side, then alternate them so drift hits all alike.
      const pidOf = (side: keyof HttpResults) => (side === 'direct' ? sandbox.pid : service.pid) as number;
      for (const side of SIDES) await drive(series[side](), Math.min(total, 500), () => cpuMs(pidOf(side)));
      const runs: Record<keyof HttpResults, Array<{ times: number[]; seconds: number; cpuMs: number }>> = { direct: [], modern: [], legacy: [], replay: [] };
      for (let round = 0; round < 2; round++) for (const side of SIDES) runs[side].push(await drive(series[side](), total / 2, () => cpuMs(pidOf(side))));
      for (const side of SIDES) {
        const merged = {
          times: runs[side].flatMap((run) => run.times),
          seconds: runs[side].reduce((sum, run) => sum + run.seconds, 0),
          cpuMs: runs[side].reduce((sum, run) => sum + run.cpuMs, 0),
        };
        results[side].push(summary(level, merged));
      }
      await Promise.all([...modern, ...legacy].map((client) => client.close().catch(() => undefined)));
      await pool.close();
      await mcpPool.close();
      process.stderr.write(`bench http: ${level} client(s) done\n`);
    }
  } finally {
    const exited = new Promise((resolve) => service.once('exit', resolve));
    service.kill('SIGTERM');
    await exited;
    sandbox.kill();
  }
  return results;
}

export function printHttp(results: HttpResults, log: (text: string) => void = (text) => process.stdout.write(text)): void {
  const f = (value: number, digits = 2) => value.toFixed(digits);
  const lines = [
    '',
    '| remote mode, billing.quota | clients | calls/s | p50 (ms) | p99 (ms) | calls/s vs direct | added p50 (ms) | CPU per call (ms) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  results.direct.forEach((direct, index) => {
    lines.push(
      `| direct to the sandbox | ${direct.clients} | ${f(direct.callsPerSecond, 0)} | ${f(direct.p50Ms)} | ${f(direct.p99Ms)} | 100% | | ${f(direct.cpuMsPerCall)} (sandbox) |`,
    );
    for (const [side, label] of [
      ['replay', 'MCP 2026-07-28, bare client (server cost)'],
      ['modern', 'MCP 2026-07-28, v2 SDK client'],
      ['legacy', 'MCP 2025 session, v1 SDK client'],
    ] as const) {
      const mcp = results[side][index];
      if (!mcp) continue;
      lines.push(
        `| ${label} | ${mcp.clients} | ${f(mcp.callsPerSecond, 0)} | ${f(mcp.p50Ms)} | ${f(mcp.p99Ms)} | ${f((mcp.callsPerSecond / direct.callsPerSecond) * 100, 0)}% | ${f(mcp.p50Ms - direct.p50Ms)} | ${f(mcp.cpuMsPerCall)} (service) |`,
      );
    }
  });
  log(`${lines.join('\n')}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  printHttp(await benchHttp());
}
