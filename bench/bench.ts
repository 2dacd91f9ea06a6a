// `npm run bench`: start-up, memory and per-call cost of the seven servers, side by side with
// the official reference server (@modelcontextprotocol/server-memory) and bare node, in one run.
// Prints a table and writes bench/results/latest.json (the previous run is compared against).
// Measures only; nothing here passes or fails. BENCH_ROUNDS sets the cold-start rounds (default 7).
// `--only large-lists` runs only the large-list section (BENCH_LARGE_ROUNDS rounds, default 5),
// and writes bench/results/large-lists.json. `--only http-peer` runs remote mode against a minimal
// SDK server (bench/http-peer.ts). `--against DIR` compares this checkout's servers with
// another built checkout's, side by side (bench/against.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client as McpClient } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Pool } from 'undici';
import { DOMAINS, serverEntry } from '../packages/sandbox/src/launch.js';
import { benchAgainst } from './against.js';
import { benchHttp, printHttp } from './http.js';
import { runHttpPeer } from './http-peer.js';
import { benchCacheHome, primeCodeCaches, writeOpening } from './code-cache.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_CALLS ?? 400);
const CONCURRENCY = 16;
/** The contact server's first start ever: no code cache yet (scripts/launcher.ts). */
const FIRST_START = 'contact, first start (no code cache)';
const LARGE_ROUNDS = Number(process.env.BENCH_LARGE_ROUNDS ?? 5);
const USAGE = `usage: npm run bench [-- --only http|http-peer|large-lists] [-- --against DIR]
  (no flag)            the whole bench: start, memory, per-call cost, remote mode, large lists
  --only SECTION       one section: http (remote mode), http-peer (against a minimal SDK server), large-lists
  --against DIR        the call path side by side with another built checkout (a worktree of an earlier commit)
Environment: BENCH_ROUNDS, BENCH_CALLS, BENCH_LARGE_ROUNDS, BENCH_PEER_LEVELS (see README, Benchmarks).`;
/** The flags, or the usage on stderr and status 2: a typo (or --help) must not start a run of many minutes. */
function benchArguments(): { only?: string; against?: string } {
  try {
    const { values } = parseArgs({ options: { only: { type: 'string' }, against: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    return { ...(values.only !== undefined ? { only: values.only } : {}), ...(values.against !== undefined ? { against: values.against } : {}) };
  } catch (error) {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    process.exit(2);
  }
}
const { only, against } = benchArguments();
const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const referenceEntry = join(dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')), 'dist/index.js');

const median = (values: number[]) => quantile(values, 0.5);
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (position - low);
}
const statusKB = (pid: number, field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** Spawns `args` with node, sends initialize and tools/list, and times the answer to tools/list. */
function coldStart(args: string[], env: Record<string, string>): Promise<{ ms: number; rssKB: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'ignore'] });
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      if (!buffer.includes('"id":2')) return;
      const ms = performance.now() - started;
      const rssKB = statusKB(child.pid as number, 'VmRSS');
      // Wait for the exit, so its teardown does not slow the next measurement.
      child.once('exit', () => resolve({ ms, rssKB }));
      child.kill();
    });
    child.on('error', reject);
    writeOpening(child.stdin);
  });
}

/** The floor: node starting a one-line module that writes a line, timed to that line as the servers are. */
function bareNode(floorScript: string): Promise<number> {
  return new Promise((resolve) => {
    const started = performance.now();
    // A clean environment, as for the servers: tsx's NODE_OPTIONS must not reach the child.
    const child = spawn(process.execPath, [floorScript], { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.once('data', () => {
      const ms = performance.now() - started;
      child.once('exit', () => resolve(ms));
    });
  });
}

async function startSandboxProcess(extraContacts = 20_000): Promise<{ child: ChildProcess; baseUrl: string; key: string }> {
  const child = spawn(
    process.execPath,
    [join(root, 'packages/sandbox/dist/cli.js'), '--port', '0', '--rate-limit', '1000000', '--extra-contacts', String(extraContacts)],
    { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const first = await new Promise<string>((resolve) => {
    let buffer = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      if (buffer.includes('\n')) resolve(buffer.split('\n')[0] as string);
    });
  });
  const { baseUrl, keys } = JSON.parse(first) as { baseUrl: string; keys: { full: string } };
  return { child, baseUrl, key: keys.full };
}

/**
 * A bare JSON-RPC client over the server's stdio: the per-call figure is then the server's cost,
 * not the SDK client's parsing and output validation.
 */
function rawClient(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map<number, (message: unknown) => void>();
  let buffer = '';
  let nextId = 1;
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const message = JSON.parse(buffer.slice(0, newline)) as { id?: number };
      buffer = buffer.slice(newline + 1);
      if (message.id !== undefined) waiting.get(message.id)?.(message);
      if (message.id !== undefined) waiting.delete(message.id);
    }
  });
  const request = (method: string, params: unknown) =>
    new Promise<any>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  return {
    child,
    request,
    async initialize() {
      await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    },
    callTool: (name: string, args: unknown) => request('tools/call', { name, arguments: args }),
    close: () => child.kill(),
  };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

async function concurrently(total: number, workers: number, fn: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  let left = total;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (left-- > 0) times.push(await timed(fn));
    }),
  );
  return times;
}

// ---- large lists: one contact.list over a big tenant, a fresh server per measurement ----

/**
 * One measurement: a fresh built contact server over stdio with the SDK client, warmed by a small
 * list read (a campaign's 12 recipients: the catalog, the HTTP client, the answer's shaping and the
 * client's output validation are then ready, and a connection is open), then one contact.list
 * timed from the client; the server's peak resident memory (VmHWM) is read after it. Then WARM_CALLS
 * more of the same list in that server, timed (the first call also pays for compiling the code
 * that reads it).
 */
const WARM_CALLS = 3;
async function largeListViaMcp(
  baseUrl: string,
  key: string,
  campaignID: string,
  args: Record<string, unknown>,
): Promise<{ ms: number; warmMs: number[]; peakMiB: number; page: unknown }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [serverEntry('contact')],
    env: { PATH: process.env.PATH ?? '', ENGAGE_BASE_URL: baseUrl, ENGAGE_API_KEY: key },
    stderr: 'ignore',
  });
  const client = new McpClient({ name: 'bench', version: '0' });
  await client.connect(transport);
  try {
    await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.byCampaign', params: { campaignID } } });
    const started = performance.now();
    const result = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', ...args } });
    const ms = performance.now() - started;
    const peakMiB = statusKB(transport.pid as number, 'VmHWM') / 1024;
    const warmMs: number[] = [];
    for (let call = 0; call < WARM_CALLS; call++)
      warmMs.push(await timed(() => client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', ...args } })));
    return { ms, warmMs, peakMiB, page: (result.structuredContent as { page?: unknown } | undefined)?.page };
  } finally {
    await client.close();
  }
}

/** The same list read directly by a fresh node process (download, then JSON.parse), warmed the same way: its time and peak memory, then WARM_CALLS more timed. */
async function largeListDirect(script: string, baseUrl: string, key: string, campaignID: string): Promise<{ ms: number; warmMs: number[]; peakMiB: number }> {
  const child = spawn(process.execPath, [script, baseUrl, key, campaignID, String(WARM_CALLS)], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  await new Promise((resolve) => child.once('exit', resolve));
  return JSON.parse(output) as { ms: number; warmMs: number[]; peakMiB: number };
}

const DIRECT_SCRIPT = `import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
const [baseUrl, key, campaignID, warmCalls] = process.argv.slice(2);
const pool = new Pool(baseUrl, { connections: 1 });
const get = async (path) => { const response = await pool.request({ path, method: 'GET', headers: { 'x-api-key': key } }); return JSON.parse(await response.body.text()); };
await get('/api/user/users/campaign/' + campaignID);
let started = performance.now();
const list = await get('/api/user/users');
const ms = performance.now() - started;
const peakMiB = Number(/VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
const warmMs = [];
for (let call = 0; call < Number(warmCalls); call++) {
  started = performance.now();
  await get('/api/user/users');
  warmMs.push(performance.now() - started);
}
process.stdout.write(JSON.stringify({ ms, warmMs, peakMiB, records: list.data.length }));
await pool.close();
`;

async function largeLists(): Promise<Record<string, unknown>> {
  const script = join(root, 'bench/results/.direct-list.mjs');
  await mkdir(join(root, 'bench/results'), { recursive: true });
  // Next to the project, so that undici resolves from its node_modules.
  await writeFile(script, DIRECT_SCRIPT);
  const cases: Array<[string, Record<string, unknown>]> = [
    ['limit 50', { limit: 50 }],
    ['limit 50, search "budi"', { limit: 50, search: 'budi' }],
  ];
  const out: Record<string, unknown> = {};
  for (const extra of [20_000, 200_000]) {
    const sandbox = await startSandboxProcess(extra);
    try {
      const campaigns = (await (await fetch(`${sandbox.baseUrl}/api/campaign/campaigns`, { headers: { 'x-api-key': sandbox.key } })).json()) as {
        data: Array<{ _id: string; totalRecipients: number }>;
      };
      const campaignID = campaigns.data.find((campaign) => campaign.totalRecipients === 12)?._id as string;
      for (const [label, args] of cases) {
        const mcp: Array<{ ms: number; warmMs: number[]; peakMiB: number }> = [];
        const direct: Array<{ ms: number; warmMs: number[]; peakMiB: number }> = [];
        let page: unknown;
        for (let round = 0; round < LARGE_ROUNDS; round++) {
          // Alternating which goes first, so neither always meets a warmer sandbox.
          const viaMcp = async () => {
            const one = await largeListViaMcp(sandbox.baseUrl, sandbox.key, campaignID, args);
            page = one.page;
            mcp.push(one);
          };
          const viaHttp = async () => void direct.push(await largeListDirect(script, sandbox.baseUrl, sandbox.key, campaignID));
          for (const step of round % 2 ? [viaHttp, viaMcp] : [viaMcp, viaHttp]) await step();
        }
        const summary = {
          records: extra + 40,
          mcpMedianMs: median(mcp.map((one) => one.ms)),
          directMedianMs: median(direct.map((one) => one.ms)),
          mcpWarmMedianMs: median(mcp.flatMap((one) => one.warmMs)),
          directWarmMedianMs: median(direct.flatMap((one) => one.warmMs)),
          mcpPeakMiB: median(mcp.map((one) => one.peakMiB)),
          directPeakMiB: median(direct.map((one) => one.peakMiB)),
          page,
        };
        out[`${extra + 40} ${label}`] = {
          ...summary,
          timeVsDirect: summary.mcpMedianMs / summary.directMedianMs,
          warmTimeVsDirect: summary.mcpWarmMedianMs / summary.directWarmMedianMs,
        };
        process.stderr.write(
          `bench: large list ${extra + 40} ${label}: first ${summary.mcpMedianMs.toFixed(1)} ms (direct ${summary.directMedianMs.toFixed(1)} ms), warm ${summary.mcpWarmMedianMs.toFixed(1)} ms (direct ${summary.directWarmMedianMs.toFixed(1)} ms), peak ${summary.mcpPeakMiB.toFixed(1)} MiB\n`,
        );
      }
    } finally {
      sandbox.child.kill();
    }
  }
  return out;
}

function printLargeLists(large: Record<string, any>, rounds: number): string[] {
  const f = (value: number, digits = 1) => value.toFixed(digits);
  const rows = Object.entries(large).map(
    ([name, r]) =>
      `| ${name} | ${f(r.mcpMedianMs)} / ${f(r.mcpWarmMedianMs)} | ${f(r.directMedianMs)} / ${f(r.directWarmMedianMs)} | ${f(r.timeVsDirect, 2)} / ${f(r.warmTimeVsDirect, 2)} | ${f(r.mcpPeakMiB)} | ${f(r.directPeakMiB)} |`,
  );
  const peak = (key: string) => (large[key] as { mcpPeakMiB: number } | undefined)?.mcpPeakMiB ?? Number.NaN;
  return [
    `Large lists (medians of ${rounds} fresh processes; first call / the ${WARM_CALLS} calls after it in the same process):`,
    '',
    '| contact.list over | through MCP, first / warm (ms) | direct: download + JSON.parse, first / warm (ms) | × direct, first / warm | server peak RSS after the first call (MiB) | direct peak RSS (MiB) |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `Peak over 200,040 ÷ peak over 20,040: ${f(peak('200040 limit 50') / peak('20040 limit 50'), 2)} (limit 50), ${f(peak('200040 limit 50, search "budi"') / peak('20040 limit 50, search "budi"'), 2)} (with a search).`,
  ];
}

async function main() {
  if (against !== undefined) {
    await mkdir(join(root, 'bench/results'), { recursive: true });
    const small = await startSandboxProcess(0);
    const large = await startSandboxProcess(460);
    try {
      process.stdout.write(`${await benchAgainst(root, against, { small, large }, join(root, 'bench/results/.memory-20.json'))}\n`);
    } finally {
      small.child.kill();
      large.child.kill();
    }
    return;
  }
  // `npm run bench -- --only http`: remote mode's section alone (bench/http.ts).
  if (only === 'http') {
    printHttp(await benchHttp());
    return;
  }
  // `npm run bench -- --only http-peer`: remote mode against a minimal SDK server (bench/http-peer.ts).
  if (only === 'http-peer') {
    await runHttpPeer();
    return;
  }
  if (only === 'large-lists') {
    process.stderr.write(`bench: large lists only, ${LARGE_ROUNDS} rounds\n`);
    const large = await largeLists();
    process.stdout.write(
      `Machine: ${cpus()[0]?.model}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}.\n\n${printLargeLists(large, LARGE_ROUNDS).join('\n')}\n`,
    );
    await writeFile(
      join(root, 'bench/results/large-lists.json'),
      `${JSON.stringify({ date: new Date().toISOString(), node: process.version, rounds: LARGE_ROUNDS, largeLists: large }, null, 2)}\n`,
    );
    process.stdout.write('\nFigures written to bench/results/large-lists.json\n');
    return;
  }
  if (only !== undefined) throw new Error(`--only takes http, http-peer or large-lists, not ${only}`);
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    memGiB: Math.round(totalmem() / 2 ** 30),
    rounds: ROUNDS,
    calls: CALLS,
  };
  process.stderr.write(`bench: ${ROUNDS} cold-start rounds, ${CALLS} calls per per-call series\n`);

  // ---- cold start and resident memory, alternating runs ----
  const env = {
    ENGAGE_API_KEY: 'eng_live_bench',
    ENGAGE_BASE_URL: 'http://127.0.0.1:9',
    MEMORY_FILE_PATH: join(root, 'bench/results/.memory.json'),
    XDG_CACHE_HOME: benchCacheHome(),
  };
  await primeCodeCaches(DOMAINS.map(serverEntry), env);
  const targets: Array<[string, string[], Record<string, string>?]> = [
    ...DOMAINS.map((domain): [string, string[]] => [domain, [serverEntry(domain)]]),
    [FIRST_START, [serverEntry('contact')], { NODE_DISABLE_COMPILE_CACHE: '1' }],
    ['reference', [referenceEntry]],
  ];
  const cold: Record<string, number[]> = {};
  const rss: Record<string, number[]> = {};
  const floor: number[] = [];
  await mkdir(join(root, 'bench/results'), { recursive: true });
  const floorScript = join(root, 'bench/results/.floor.mjs');
  await writeFile(floorScript, 'process.stdout.write("ready\\n");\n');
  for (let round = 0; round < ROUNDS; round++) {
    const order = [...targets.slice(round % targets.length), ...targets.slice(0, round % targets.length)];
    for (const [name, args, extra] of order) {
      const { ms, rssKB } = await coldStart(args, { ...env, ...extra });
      (cold[name] ??= []).push(ms);
      (rss[name] ??= []).push(rssKB);
      if (name === 'reference' || name === 'contact') floor.push(await bareNode(floorScript));
    }
  }
  const coldMedians = Object.fromEntries(Object.entries(cold).map(([name, values]) => [name, median(values)]));
  const rssMedians = Object.fromEntries(Object.entries(rss).map(([name, values]) => [name, median(values) / 1024]));
  results.coldStartMs = { ...coldMedians, bareNode: median(floor) };
  results.rssMiB = rssMedians;

  // ---- all seven started at once, as a host does at launch, against seven reference servers ----
  const together: Record<'ours' | 'reference', { ms: number[]; rssMiB: number[] }> = { ours: { ms: [], rssMiB: [] }, reference: { ms: [], rssMiB: [] } };
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 ? (['reference', 'ours'] as const) : (['ours', 'reference'] as const)) {
      const entries = side === 'ours' ? DOMAINS.map((domain) => [serverEntry(domain)]) : DOMAINS.map(() => [referenceEntry]);
      const started = await Promise.all(entries.map((args) => coldStart(args, env)));
      together[side].ms.push(Math.max(...started.map((one) => one.ms)));
      together[side].rssMiB.push(started.reduce((sum, one) => sum + one.rssKB, 0) / 1024);
    }
  }
  results.allSeven = Object.fromEntries(
    Object.entries(together).map(([side, { ms, rssMiB }]) => [side, { lastAnswerMs: median(ms), totalRssMiB: median(rssMiB) }]),
  );

  // ---- per-call cost: through the MCP server minus the same request made directly ----
  const sandbox = await startSandboxProcess();
  const pool = new Pool(sandbox.baseUrl, { connections: CONCURRENCY });
  const direct = async (path: string) => {
    const response = await pool.request({ path, method: 'GET', headers: { 'x-api-key': sandbox.key } });
    JSON.parse(await response.body.text());
  };
  const serverEnv = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.key };
  const servers = { billing: rawClient([serverEntry('billing')], serverEnv), contact: rawClient([serverEntry('contact')], serverEnv) };
  try {
    await servers.billing.initialize();
    await servers.contact.initialize();
    const viaMcp = () => servers.billing.callTool('billing_get', { operationId: 'billing.quota' });
    const viaHttp = () => direct('/api/ai/v1/quota');
    for (let warm = 0; warm < 50; warm++) {
      await viaMcp();
      await viaHttp();
    }
    const sequential = { mcp: [] as number[], http: [] as number[] };
    for (let block = 0; block < CALLS / 50; block++) {
      for (let index = 0; index < 50; index++) sequential.mcp.push(await timed(viaMcp));
      for (let index = 0; index < 50; index++) sequential.http.push(await timed(viaHttp));
    }
    const parallel = { mcp: await concurrently(CALLS, CONCURRENCY, viaMcp), http: await concurrently(CALLS, CONCURRENCY, viaHttp) };
    const summary = (series: { mcp: number[]; http: number[] }) => ({
      mcpMedianMs: median(series.mcp),
      mcpP99Ms: quantile(series.mcp, 0.99),
      httpMedianMs: median(series.http),
      httpP99Ms: quantile(series.http, 0.99),
      addedMedianMs: median(series.mcp) - median(series.http),
      addedP99Ms: quantile(series.mcp, 0.99) - quantile(series.http, 0.99),
    });
    results.perCall = { sequential: summary(sequential), concurrency16: summary(parallel) };

    // ---- a 20,000-record list: server time and peak memory ----
    const listMcp: number[] = [];
    const listHttp: number[] = [];
    for (let index = 0; index < 20; index++) {
      listMcp.push(await timed(() => servers.contact.callTool('contact_read', { operationId: 'contact.list', limit: 50 })));
      listHttp.push(await timed(() => direct('/api/user/users')));
    }
    results.list20k = {
      records: 20_040,
      mcpMedianMs: median(listMcp),
      httpMedianMs: median(listHttp),
      serverMedianMs: median(listMcp) - median(listHttp),
      peakRssMiB: statusKB(servers.contact.child.pid as number, 'VmHWM') / 1024,
    };
  } finally {
    for (const server of Object.values(servers)) server.close();
    await pool.close();
    sandbox.child.kill();
  }
  results.largeLists = await largeLists();

  // ---- remote mode: MCP over HTTP against the same calls made directly (bench/http.ts) ----
  const http = await benchHttp();
  results.http = http;

  print(results);
  printHttp(http);
  const file = join(root, 'bench/results/latest.json');
  const previous = existsSync(file) ? (JSON.parse(await readFile(file, 'utf8')) as typeof results) : undefined;
  if (previous) compare(previous, results);
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\nFigures written to bench/results/latest.json\n`);
}

function print(results: Record<string, any>) {
  const f = (value: number, digits = 1) => value.toFixed(digits);
  const cold = results.coldStartMs as Record<string, number>;
  const rss = results.rssMiB as Record<string, number>;
  const reference = cold.reference as number;
  const lines = [
    `Machine: ${results.cpuModel}, ${results.cpus} cores, ${results.memGiB} GiB; Node ${results.node}. Medians of ${results.rounds} alternating runs.`,
    '',
    '| server | cold start to tools/list (ms) | × reference | resident memory (MiB) | × reference |',
    '|---|---|---|---|---|',
    ...[...DOMAINS, FIRST_START, 'reference'].map(
      (name) =>
        `| ${name === 'reference' ? 'reference: server-memory' : name} | ${f(cold[name] as number)} | ${f((cold[name] as number) / reference, 2)} | ${f(rss[name] as number)} | ${f((rss[name] as number) / (rss.reference as number), 2)} |`,
    ),
    `| bare node printing a line (floor) | ${f(cold.bareNode as number)} | ${f((cold.bareNode as number) / reference, 2)} | | |`,
    '',
    '| seven started at once | last tools/list answered (ms) | total resident memory (MiB) |',
    '|---|---|---|',
    `| the seven engage-mcp servers | ${f(results.allSeven.ours.lastAnswerMs)} | ${f(results.allSeven.ours.totalRssMiB)} |`,
    `| seven reference servers | ${f(results.allSeven.reference.lastAnswerMs)} | ${f(results.allSeven.reference.totalRssMiB)} |`,
    '',
    '| per call (billing.quota) | through MCP median / p99 (ms) | direct HTTP median / p99 (ms) | added median / p99 (ms) |',
    '|---|---|---|---|',
    ...(['sequential', 'concurrency16'] as const).map((kind) => {
      const s = results.perCall[kind];
      return `| ${kind === 'sequential' ? 'sequential' : 'concurrency 16'} | ${f(s.mcpMedianMs, 2)} / ${f(s.mcpP99Ms, 2)} | ${f(s.httpMedianMs, 2)} / ${f(s.httpP99Ms, 2)} | ${f(s.addedMedianMs, 2)} / ${f(s.addedP99Ms, 2)} |`;
    }),
    '',
    `20,040-record contact.list (limit 50): ${f(results.list20k.mcpMedianMs)} ms through MCP, ${f(results.list20k.httpMedianMs)} ms direct, so ${f(results.list20k.serverMedianMs)} ms in the server; peak RSS ${f(results.list20k.peakRssMiB)} MiB.`,
    '',
    ...printLargeLists(results.largeLists, LARGE_ROUNDS),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

function compare(previous: Record<string, any>, current: Record<string, any>) {
  const rows: string[] = [];
  const delta = (label: string, before: number | undefined, after: number | undefined) => {
    if (typeof before === 'number' && typeof after === 'number')
      rows.push(`${label}: ${before.toFixed(2)} → ${after.toFixed(2)} (${after >= before ? '+' : ''}${(((after - before) / before) * 100).toFixed(0)}%)`);
  };
  delta('contact cold start ms', previous.coldStartMs?.contact, current.coldStartMs?.contact);
  delta('contact RSS MiB', previous.rssMiB?.contact, current.rssMiB?.contact);
  delta('added per call ms (sequential median)', previous.perCall?.sequential?.addedMedianMs, current.perCall?.sequential?.addedMedianMs);
  delta('20k list server ms', previous.list20k?.serverMedianMs, current.list20k?.serverMedianMs);
  if (rows.length) process.stdout.write(`\nAgainst the previous run (${previous.date}):\n${rows.join('\n')}\n`);
}

await main();
