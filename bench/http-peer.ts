// `npm run bench -- --only http-peer`: remote mode's /mcp/contact side by side with a minimal
// server on the same SDK entries (bench/peer-server.mjs: createMcpHandler + toNodeHandler, one tool
// doing the same GET /api/user/users with undici and returning its JSON as text). Both run as their
// own processes against one sandbox (its 40 contacts, a rate limit nobody reaches), and the same
// load generator drives them at 1, 16 and 64 clients, alternating the sides: the exact request the
// v2 SDK client (pinned to 2026-07-28) sends, captured once per side, replayed over a keep-alive
// pool ("replay": the servers' own cost), and with BENCH_PEER_CLIENTS=replay,sdk also the v2 SDK
// client itself. CPU per call is the server process's (every thread, from /proc, as against.ts).
// Measures only; nothing passes or fails. BENCH_HTTP_CALLS: calls per client (default 150);
// BENCH_HTTP_NODE_ARGS: node flags for the service (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Pool } from 'undici';
import { drive, firstLine, quantile } from './http.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const LEVELS = (process.env.BENCH_PEER_LEVELS ?? '1,16,64').split(',').map(Number);
const CALLS_PER_CLIENT = Number(process.env.BENCH_HTTP_CALLS ?? 150);
const MIN_CALLS = 2_000;
const ROUNDS = 4;
const CLIENT_KINDS = (process.env.BENCH_PEER_CLIENTS ?? 'replay').split(',') as ClientKind[];

type Side = 'ours' | 'peer';
type ClientKind = 'replay' | 'sdk';
export interface PeerSeries {
  side: Side;
  client: ClientKind;
  clients: number;
  calls: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** The server process's CPU time (every thread) per call: the figure other load moves least. */
  cpuMsPerCall: number;
}

/** A server under test: where its MCP endpoint is, which tool call does the GET, and its process. */
interface Target {
  side: Side;
  endpoint: URL;
  call: { name: string; arguments: Record<string, unknown> };
  child: ChildProcess;
}

/** CPU time a process has used so far, every thread, in ms (each task's schedstat). */
function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return ns / 1e6;
}

function start(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
}

const modernClient = () => new Client({ name: 'bench', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });

/** The HTTP request the v2 client sends for the target's call, captured (not written here); a 2026-07-28 request stands alone. */
async function captureCall(target: Target, headers: Record<string, string>): Promise<{ headers: Record<string, string>; body: string }> {
  let captured: { headers: Record<string, string>; body: string } | undefined;
  const client = modernClient();
  await client.connect(
    new StreamableHTTPClientTransport(target.endpoint, {
      requestInit: { headers },
      fetch: async (input, init) => {
        const body = typeof init?.body === 'string' ? init.body : undefined;
        if (body?.includes('"tools/call"')) captured = { headers: Object.fromEntries(new Headers(init?.headers).entries()), body };
        return fetch(input, init);
      },
    }),
  );
  const result = await client.callTool(target.call);
  await client.close();
  if (result.isError || !captured) throw new Error(`${target.side}: the call failed or was not captured: ${JSON.stringify(result).slice(0, 300)}`);
  return captured;
}

type Run = { times: number[]; seconds: number; cpuMs: number };

/** The workers of one kind of client for one target at one level, and how to close them. */
async function workersFor(kind: ClientKind, target: Target, level: number, headers: Record<string, string>) {
  if (kind === 'sdk') {
    const clients = await Promise.all(
      Array.from({ length: level }, async () => {
        const client = modernClient();
        await client.connect(new StreamableHTTPClientTransport(target.endpoint, { requestInit: { headers } }));
        return client;
      }),
    );
    const workers = clients.map((client) => async () => {
      const result = await client.callTool(target.call);
      if (result.isError) throw new Error(`${target.side}: ${JSON.stringify(result).slice(0, 300)}`);
    });
    return { workers, close: () => Promise.all(clients.map((client) => client.close().catch(() => undefined))) };
  }
  const request = await captureCall(target, headers);
  const pool = new Pool(target.endpoint.origin, { connections: level });
  const replay = async () => {
    const response = await pool.request({ path: target.endpoint.pathname, method: 'POST', headers: request.headers, body: request.body });
    const text = await response.body.text();
    if (response.statusCode !== 200 || !text.includes('"result"') || text.includes('"isError":true'))
      throw new Error(`${target.side} answered ${response.statusCode}: ${text.slice(0, 300)}`);
  };
  return { workers: Array.from({ length: level }, () => replay), close: () => pool.close() };
}

function summary(side: Side, client: ClientKind, clients: number, runs: Run[]): PeerSeries {
  const times = runs.flatMap((run) => run.times);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const cpu = runs.reduce((sum, run) => sum + run.cpuMs, 0);
  return {
    side,
    client,
    clients,
    calls: times.length,
    callsPerSecond: times.length / seconds,
    p50Ms: quantile(times, 0.5),
    p99Ms: quantile(times, 0.99),
    cpuMsPerCall: cpu / times.length,
  };
}

/** One level with one kind of client: warm both sides, then ROUNDS rounds, the side going first alternating. */
async function level(kind: ClientKind, targets: Target[], clients: number, headers: Record<string, string>): Promise<PeerSeries[]> {
  const total = Math.max(MIN_CALLS, clients * CALLS_PER_CLIENT);
  const prepared = await Promise.all(targets.map((target) => workersFor(kind, target, clients, headers)));
  const runs: Run[][] = targets.map(() => []);
  try {
    for (const [index, target] of targets.entries()) await drive(prepared[index]!.workers, Math.min(total, 500), () => cpuMs(target.child.pid!));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [1, 0] : [0, 1];
      for (const index of order) runs[index]!.push(await drive(prepared[index]!.workers, total / ROUNDS, () => cpuMs(targets[index]!.child.pid!)));
    }
  } finally {
    await Promise.all(prepared.map((one) => one.close()));
  }
  return targets.map((target, index) => summary(target.side, kind, clients, runs[index]!));
}

export async function benchHttpPeer(): Promise<PeerSeries[]> {
  const sandbox = start([join(root, 'packages/sandbox/dist/cli.js'), '--port', '0', '--rate-limit', '100000000']);
  const { baseUrl, keys } = JSON.parse(await firstLine(sandbox)) as { baseUrl: string; keys: { full: string } };
  const nodeArgs = (process.env.BENCH_HTTP_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // The service as it ships (info logs to a stderr nobody reads), with a per-key limit above the bench's.
  const service = start([...nodeArgs, join(root, 'packages/http/dist/cli.js')], {
    ENGAGE_BASE_URL: baseUrl,
    ENGAGE_HTTP_PORT: '0',
    ENGAGE_HTTP_MAX_CONCURRENT_PER_KEY: '1000',
  });
  const peerArgs = (process.env.BENCH_PEER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const peer = start([...peerArgs, join(root, 'bench/peer-server.mjs'), baseUrl]);
  const results: PeerSeries[] = [];
  try {
    const ours = JSON.parse(await firstLine(service)) as { url: string };
    const theirs = JSON.parse(await firstLine(peer)) as { url: string };
    const targets: Target[] = [
      { side: 'ours', endpoint: new URL('/mcp/contact', ours.url), call: { name: 'contact_read', arguments: { operationId: 'contact.list' } }, child: service },
      { side: 'peer', endpoint: new URL('/mcp', theirs.url), call: { name: 'contact_list', arguments: {} }, child: peer },
    ];
    const headers = { authorization: `Bearer ${keys.full}` };
    for (const kind of CLIENT_KINDS)
      for (const clients of LEVELS) {
        results.push(...(await level(kind, targets, clients, headers)));
        process.stderr.write(`bench http-peer: ${kind}, ${clients} client(s) done\n`);
      }
  } finally {
    await Promise.all([service, peer].map((child) => stop(child)));
    sandbox.kill();
  }
  return results;
}

/** SIGTERM and wait for the exit (a --cpu-prof profile is written then). */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

export function printHttpPeer(results: PeerSeries[]): string {
  const f = (value: number, digits = 2) => value.toFixed(digits);
  const lines = [
    '| GET /api/user/users through | client | clients | calls/s | p50 (ms) | p99 (ms) | CPU per call (ms) | calls/s vs the minimal server |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const peer of results.filter((series) => series.side === 'peer')) {
    const ours = results.find((series) => series.side === 'ours' && series.client === peer.client && series.clients === peer.clients);
    if (!ours) continue;
    const client = peer.client === 'replay' ? 'replayed request' : 'v2 SDK client';
    for (const [series, label] of [
      [peer, 'minimal SDK server'],
      [ours, 'remote mode, /mcp/contact'],
    ] as const) {
      const ratio = series === peer ? '100%' : `${f((ours.callsPerSecond / peer.callsPerSecond) * 100, 0)}%`;
      const figures = [f(series.callsPerSecond, 0), f(series.p50Ms), f(series.p99Ms), f(series.cpuMsPerCall), ratio];
      lines.push(`| ${label} | ${client} | ${series.clients} | ${figures.join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

export async function runHttpPeer(): Promise<void> {
  const results = await benchHttpPeer();
  process.stdout.write(`Machine: ${cpus()[0]?.model}, ${cpus().length} cores; Node ${process.version}.\n\n${printHttpPeer(results)}\n`);
  await mkdir(join(root, 'bench/results'), { recursive: true });
  await writeFile(
    join(root, 'bench/results/http-peer.json'),
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, results }, null, 2)}\n`,
  );
  process.stdout.write('\nFigures written to bench/results/http-peer.json\n');
}
