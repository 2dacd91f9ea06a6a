// `npm run bench -- --against DIR`: this checkout's built servers side by side with another
// checkout's (a worktree of the commit before a change, say, built with `npm ci`) and with the
// official reference server (server-memory, `read_graph` of 20 entities), in one run, alternating
// which goes first. What a user feels: cold start to tools/list and resident memory (contact), the
// first tool call of a fresh server, seven servers started at once, and for a small read, a
// 20-record list, a 500-record page, a confirmed write and one needing no yes, the server's own CPU
// time per call (process CPU, every thread, from /proc: not wall-clock time, so a noisy machine moves it little)
// warm and over the first 100 calls of a fresh server, and the latency it adds to the same request
// made directly.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { benchCacheHome, primeCodeCaches } from './code-cache.js';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Pool } from 'undici';

type Side = 'this' | 'other' | 'reference';
const SIDES: readonly Side[] = ['this', 'other', 'reference'];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_CALLS ?? 400);
const FIRST_CALLS = 100;
/**
 * Calls made before a warm figure is measured. V8 optimizes a function after many calls, on its own
 * threads (counted in the process's CPU): after 50 calls the figure still held that compiling, and
 * ranked the servers by how much code they have rather than by what a call costs. The cold cost is
 * the first-100 figure.
 */
const WARM_UP_CALLS = Number(process.env.BENCH_WARM_UP ?? 1000);
const stateRoot = mkdtempSync(join(tmpdir(), 'engage-bench-'));
/** The servers' code caches (scripts/launcher.ts), primed before the rounds (bench/code-cache.ts). */
const cacheHome = benchCacheHome();
const require = createRequire(import.meta.url);
const referenceEntry = join(dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')), 'dist/index.js');

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = (sorted.length - 1) / 2;
  return ((sorted[Math.floor(middle)] as number) + (sorted[Math.ceil(middle)] as number)) / 2;
};

/** CPU time a process has used so far, every thread (ns, from each task's schedstat). */
function cpuNs(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return total;
}

const rssKB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** A bare line-delimited JSON-RPC peer over a server's stdio (the bench measures the server, not a client). */
function serverProcess(entry: string, env: Record<string, string>) {
  const started = performance.now();
  const child = spawn(process.execPath, [entry], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'ignore'] });
  const waiting = new Map<number, (message: unknown) => void>();
  let buffer = '';
  let nextId = 1;
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
      const message = JSON.parse(buffer.slice(0, newline)) as { id?: number };
      buffer = buffer.slice(newline + 1);
      if (message.id !== undefined) waiting.get(message.id)?.(message);
    }
  });
  const request = (method: string, params: unknown) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const open = async () => {
    await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    await request('tools/list', {});
    return performance.now() - started;
  };
  /**
   * Stops the server and waits for it to be gone: a process still exiting (or a server's shutdown
   * work) would run beside the next side's cold start and bias whichever side follows it.
   */
  const close = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill();
    });
  return { child, request, open, close };
}

type Sandboxes = Record<'small' | 'large', { baseUrl: string; key: string }>;
type Server = ReturnType<typeof serverProcess>;
type Figures = Record<string, number>;

interface Case {
  name: string;
  domain: string;
  sandbox: keyof Sandboxes;
  /** The direct request the same call makes (for the latency added), if it is one GET. */
  direct?: string;
  env?: Record<string, string>;
  /** One call; a confirmed write is its preview and then the call with the token. */
  call(server: Server, index: number): Promise<unknown>;
}

const tool = (name: string, args: Record<string, unknown>) => (server: Server) => server.request('tools/call', { name, arguments: args });
/** `contact.create` with every write confirmed: the preview, then the same call with its token (no elicitation: a bare client). */
async function confirmedCreate(server: Server, index: number): Promise<unknown> {
  const args = { operationId: 'contact.create', params: { name: `Bench ${index}`, msisdn: `62899${String(index).padStart(7, '0')}` } };
  const preview = (await server.request('tools/call', { name: 'contact_action', arguments: args })) as {
    result?: { structuredContent?: { confirmationToken?: string } };
  };
  const confirmationToken = preview.result?.structuredContent?.confirmationToken;
  if (!confirmationToken) throw new Error(`no preview token: ${JSON.stringify(preview).slice(0, 300)}`);
  return server.request('tools/call', { name: 'contact_action', arguments: { ...args, confirmationToken } });
}

/** `contact.create` with ENGAGE_CONFIRM=none: one call, marked in flight in the state folder as every write is. */
function uncheckedCreate(server: Server, index: number): Promise<unknown> {
  const params = { name: `Bench ${index}`, msisdn: `62898${String(index).padStart(7, '0')}` };
  return server.request('tools/call', { name: 'contact_action', arguments: { operationId: 'contact.create', params } });
}

const CASES: Case[] = [
  { name: 'billing.quota', domain: 'billing', sandbox: 'small', direct: '/api/ai/v1/quota', call: tool('billing_get', { operationId: 'billing.quota' }) },
  {
    name: 'contact.list, 20 records',
    domain: 'contact',
    sandbox: 'small',
    direct: '/api/user/users',
    call: tool('contact_read', { operationId: 'contact.list', limit: 20 }),
  },
  {
    name: 'contact.list, a 500-record page',
    domain: 'contact',
    sandbox: 'large',
    direct: '/api/user/users',
    call: tool('contact_read', { operationId: 'contact.list', limit: 500 }),
  },
  { name: 'contact.create, confirmed (preview + token)', domain: 'contact', sandbox: 'large', env: { ENGAGE_CONFIRM: 'all' }, call: confirmedCreate },
  { name: 'contact.create, no yes needed', domain: 'contact', sandbox: 'large', env: { ENGAGE_CONFIRM: 'none' }, call: uncheckedCreate },
];
/** The reference's comparable read: server-memory's read_graph of 20 entities. */
const REFERENCE_CASE = 'read_graph, 20 entities';
/**
 * The floor for a call that makes one GET: a minimal server on the same SDK (bench/stdio-peer.mjs)
 * returning the API's JSON as text, with nothing of ours (measured in the reference's turn).
 */
const PEER_CASES = [
  { name: 'billing.quota', path: '/api/ai/v1/quota' },
  { name: 'contact.list, 20 records', path: '/api/user/users' },
] as const;
const peerEntry = join(dirname(new URL(import.meta.url).pathname), 'stdio-peer.mjs');
let writes = 0;

/** CPU per call and the median latency of `count` calls made one after another. */
async function series(server: Server, count: number, call: (index: number) => Promise<unknown>): Promise<{ cpuMs: number; medianMs: number }> {
  const before = cpuNs(server.child.pid as number);
  const times: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    await call(index);
    times.push(performance.now() - started);
  }
  return { cpuMs: (cpuNs(server.child.pid as number) - before) / count / 1e6, medianMs: median(times) };
}

/** Seven servers started at once, as a host does: the last tools/list answered (ms) and their resident memory together (MiB). */
async function sevenAtOnce(entries: string[], env: Record<string, string>): Promise<{ ms: number; rssMiB: number }> {
  const started = performance.now();
  const servers = entries.map((entry) => serverProcess(entry, env));
  await Promise.all(servers.map((server) => server.open()));
  const ms = performance.now() - started;
  const rssMiB = servers.reduce((sum, server) => sum + rssKB(server.child.pid as number), 0) / 1024;
  await Promise.all(servers.map((server) => server.close()));
  return { ms, rssMiB };
}

const DOMAINS = ['contact', 'campaign', 'inbox', 'channel', 'product', 'billing', 'tenant'];

/** One side's figures for one round. */
async function measure(side: Side, root: string, sandboxes: Sandboxes, memoryFile: string, direct: Directs): Promise<Figures> {
  const entry = (domain: string) => (side === 'reference' ? referenceEntry : join(root, `packages/${domain}/dist/index.js`));
  // Each server gets its own, empty state folder (the confirmed writes' journal and audit record):
  // a folder shared by the rounds would grow, and make each write's cost depend on the ones before.
  const env = (which: keyof Sandboxes, extra: Record<string, string> = {}) => ({
    ENGAGE_BASE_URL: sandboxes[which].baseUrl,
    ENGAGE_API_KEY: sandboxes[which].key,
    ENGAGE_STATE_DIR: mkdtempSync(join(stateRoot, 'state-')),
    MEMORY_FILE_PATH: memoryFile,
    XDG_CACHE_HOME: cacheHome,
    ...extra,
  });
  const out: Figures = {};
  const cold = serverProcess(entry('contact'), env('small'));
  out.startMs = await cold.open();
  out.rssMiB = rssKB(cold.child.pid as number) / 1024;
  // The first tool call of a fresh server (it loads the catalog and the HTTP client), then the first 100 in all.
  const first = side === 'reference' ? tool('read_graph', {}) : (CASES[1] as Case).call;
  const firstCall = await series(cold, 1, () => first(cold, 0));
  out.firstCallMs = firstCall.medianMs;
  const rest = await series(cold, FIRST_CALLS - 1, () => first(cold, 0));
  out.first100CpuMs = (firstCall.cpuMs + rest.cpuMs * (FIRST_CALLS - 1)) / FIRST_CALLS;
  // What a server that has worked holds: the first call loads the catalog, undici and node:http.
  out.rssAfterCallsMiB = rssKB(cold.child.pid as number) / 1024;
  await cold.close();
  const seven = await sevenAtOnce(DOMAINS.map(entry), env('small'));
  out.sevenMs = seven.ms;
  out.sevenRssMiB = seven.rssMiB;
  const cases = side === 'reference' ? [{ name: REFERENCE_CASE, domain: 'contact', sandbox: 'small' as const, call: tool('read_graph', {}) }] : CASES;
  for (const one of cases) {
    const server = serverProcess(entry(one.domain), env(one.sandbox, (one as Case).env));
    await server.open();
    const call = (index: number) => one.call(server, index + writes++);
    await series(server, WARM_UP_CALLS, call);
    const warm = await series(server, CALLS, call);
    out[`${one.name}: cpu`] = warm.cpuMs;
    out[`${one.name}: latency`] = warm.medianMs;
    const path = (one as Case).direct;
    if (path) out[`${one.name}: added`] = warm.medianMs - (await direct[one.sandbox](path));
    await server.close();
  }
  if (side === 'reference') for (const peer of PEER_CASES) out[`peer ${peer.name}: cpu`] = await peerCpu(peer.path, env('small'));
  return out;
}

/** Server CPU per warm call of the minimal SDK server doing one GET of `path`. */
async function peerCpu(path: string, env: Record<string, string>): Promise<number> {
  const server = serverProcess(peerEntry, env);
  await server.open();
  const call = () => server.request('tools/call', { name: 'get', arguments: { path } });
  await series(server, WARM_UP_CALLS, call);
  const warm = await series(server, CALLS, call);
  await server.close();
  return warm.cpuMs;
}

type Directs = Record<keyof Sandboxes, (path: string) => Promise<number>>;
/** The median latency of the same GET made directly, over a keep-alive pool. */
function directs(sandboxes: Sandboxes): { directs: Directs; close(): Promise<void> } {
  const pools = { small: new Pool(sandboxes.small.baseUrl, { connections: 1 }), large: new Pool(sandboxes.large.baseUrl, { connections: 1 }) };
  const one = (which: keyof Sandboxes) => async (path: string) => {
    const times: number[] = [];
    for (let index = 0; index < 200; index++) {
      const started = performance.now();
      const response = await pools[which].request({ path, method: 'GET', headers: { 'x-api-key': sandboxes[which].key } });
      JSON.parse(await response.body.text());
      times.push(performance.now() - started);
    }
    return median(times.slice(50));
  };
  return {
    directs: { small: one('small'), large: one('large') },
    close: async () => void (await Promise.all(Object.values(pools).map((pool) => pool.close()))),
  };
}

export async function benchAgainst(thisRoot: string, otherRoot: string, sandboxes: Sandboxes, memoryFile: string): Promise<string> {
  await writeFile(memoryFile, memoryGraph(20));
  const figures: Record<Side, Figures[]> = { this: [], other: [], reference: [] };
  const direct = directs(sandboxes);
  try {
    for (const root of [thisRoot, otherRoot]) {
      await primeCodeCaches(
        DOMAINS.map((domain) => join(root, `packages/${domain}/dist/index.js`)),
        {
          ENGAGE_BASE_URL: sandboxes.small.baseUrl,
          ENGAGE_API_KEY: sandboxes.small.key,
          XDG_CACHE_HOME: cacheHome,
          ENGAGE_STATE_DIR: mkdtempSync(join(stateRoot, 'state-')),
        },
      );
    }
    for (let round = 0; round < ROUNDS; round++) {
      const order = [...SIDES.slice(round % 3), ...SIDES.slice(0, round % 3)];
      for (const side of order) {
        figures[side].push(await measure(side, side === 'other' ? otherRoot : thisRoot, sandboxes, memoryFile, direct.directs));
        process.stderr.write(`bench --against: round ${round + 1}/${ROUNDS}, ${side} done\n`);
      }
    }
  } finally {
    await direct.close();
    rmSync(stateRoot, { recursive: true, force: true });
    rmSync(cacheHome, { recursive: true, force: true });
  }
  return report(figures, otherRoot);
}

/** server-memory's store: `count` entities, one JSON line each, with an observation apiece. */
function memoryGraph(count: number): string {
  const lines = Array.from({ length: count }, (_, index) =>
    JSON.stringify({ type: 'entity', name: `Contact ${index}`, entityType: 'person', observations: [`phone 62812000${index}`, `email c${index}@example.com`] }),
  );
  return `${lines.join('\n')}\n`;
}

function report(figures: Record<Side, Figures[]>, otherRoot: string): string {
  const of = (side: Side, key: string) => median(figures[side].map((round) => round[key] as number));
  const f = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '');
  const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) ? (a / b).toFixed(2) : '');
  const row = (label: string, key: string, digits: number, referenceKey = key) => {
    const [mine, other, reference] = [of('this', key), of('other', key), of('reference', referenceKey)];
    return `| ${label} | ${f(mine, digits)} | ${f(other, digits)} | ${ratio(mine, other)} | ${f(reference, digits)} | ${ratio(mine, reference)} |`;
  };
  const refCase = `${REFERENCE_CASE}: cpu`;
  return [
    `This checkout, ${otherRoot}, and the reference server (server-memory): medians of ${ROUNDS} rounds (the order rotating),`,
    `${CALLS} warm calls per figure after ${WARM_UP_CALLS} unmeasured, the first ${FIRST_CALLS} calls of a fresh server; CPU is the server process's, from /proc.`,
    '',
    '| measure | this checkout | the other | × the other | reference | × reference |',
    '|---|---|---|---|---|---|',
    row('contact: cold start to tools/list (ms)', 'startMs', 1),
    row('contact: resident memory (MiB)', 'rssMiB', 1),
    row('seven started at once: last tools/list (ms)', 'sevenMs', 1),
    row('seven started at once: resident memory (MiB)', 'sevenRssMiB', 1),
    row('first tool call of a fresh server, contact.list 20 (reference: read_graph) (ms)', 'firstCallMs', 1),
    row(`server CPU per call over the first ${FIRST_CALLS}, same call (ms)`, 'first100CpuMs', 3),
    row(`contact: resident memory after those ${FIRST_CALLS} calls (MiB)`, 'rssAfterCallsMiB', 1),
    ...CASES.flatMap((one) => [
      row(`server CPU per warm call, ${one.name} (ms)`, `${one.name}: cpu`, 3, refCase),
      row(`median latency, ${one.name} (ms)`, `${one.name}: latency`, 3, `${REFERENCE_CASE}: latency`),
      ...(one.direct ? [row(`latency added to the direct GET, ${one.name} (ms)`, `${one.name}: added`, 3, 'none')] : []),
    ]),
    '',
    `Reference figures per call are its ${REFERENCE_CASE} (no API behind it).`,
    '',
    '| server CPU per warm call (ms) | this checkout | minimal SDK server, same GET (bench/stdio-peer.mjs) | × minimal |',
    '|---|---|---|---|',
    ...PEER_CASES.map((peer) => {
      const [mine, floor] = [of('this', `${peer.name}: cpu`), of('reference', `peer ${peer.name}: cpu`)];
      return `| ${peer.name} | ${f(mine, 3)} | ${f(floor, 3)} | ${ratio(mine, floor)} |`;
    }),
    '',
    'The minimal server answers with the API body as text (for the list, all 40 records of the small tenant): no paging, cleaning, redaction or output schema.',
  ].join('\n');
}
