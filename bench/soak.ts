// `npm run soak`: a bounded soak of the remote service. The sandbox API, a real redis-server, two
// replicas of the built service (packages/http/dist/cli.js) sharing Redis and one secret, and a
// round-robin proxy (bench/proxy.ts) in front; N clients (the v2 MCP client over Streamable HTTP,
// pinned to 2026-07-28, no elicitation) make mixed reads and confirmed writes for M minutes while
// one replica is restarted (SIGTERM, then started again) midway. Prints a table; exits 1 if a call
// was lost, a write was carried out twice, a replayed token ran, or a "done" was not carried out.
//
//   npm run soak -- [--minutes 5] [--clients 64] [--think-ms 50] [--write-share 0.25] [--replay-share 0.1] [--keys N] [--rate-limit N] [--lb-drain-ms N]
//
// By default the replica gets SIGTERM while the proxy still routes to it, as when a load balancer
// learns of it only from /readyz; --lb-drain-ms N takes it out of rotation N ms before, as an
// orchestrated rollout does.
//
// The sandbox runs in this process (startSandbox), not as `packages/sandbox/dist/cli.js`: its record
// of what it carried out (the write log) is only available in process; the replicas reach it over
// HTTP exactly as they would the CLI's.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ALL_SCOPES, startSandbox } from '../packages/sandbox/src/index.js';
import { connectRedis } from '../packages/http/src/redis.js';
import { startRedis } from '../test/redis-server.js';
import { CLI, Replica, describeThrown, label, quantile, rssKB, sleep } from './fleet.js';
import { startProxy } from './proxy.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    clients: { type: 'string', default: '64' },
    'think-ms': { type: 'string', default: '50' },
    'write-share': { type: 'string', default: '0.25' },
    'replay-share': { type: 'string', default: '0.1' },
    keys: { type: 'string' },
    'rate-limit': { type: 'string', default: '60000' },
    'lb-drain-ms': { type: 'string', default: '0' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write(
    'Usage: npm run soak -- [--minutes 5] [--clients 64] [--think-ms 50] [--write-share 0.25] [--replay-share 0.1] [--keys N] [--rate-limit per-key-per-minute] [--lb-drain-ms N]\n',
  );
  process.exit(0);
}
const positive = (name: string, value: string | undefined, integer = false): number => {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0 || (integer && !Number.isInteger(parsed))) {
    process.stderr.write(`soak: --${name} must be a ${integer ? 'whole ' : ''}number of at least 0\n`);
    process.exit(2);
  }
  return parsed;
};
const MINUTES = positive('minutes', values.minutes);
const CLIENTS = Math.max(1, positive('clients', values.clients, true));
const THINK_MS = positive('think-ms', values['think-ms']);
const WRITE_SHARE = Math.min(1, positive('write-share', values['write-share']));
const REPLAY_SHARE = Math.min(1, positive('replay-share', values['replay-share']));
const KEYS = Math.max(1, values.keys === undefined ? Math.ceil(CLIENTS / 8) : positive('keys', values.keys, true));
const RATE_LIMIT = Math.max(1, positive('rate-limit', values['rate-limit'], true));
/** 0: the replica gets SIGTERM while the proxy still sends to it (it learns from /readyz). N: the proxy stops sending N ms before, as an orchestrated rollout does. */
const LB_DRAIN_MS = positive('lb-drain-ms', values['lb-drain-ms'], true);
const DURATION_MS = Math.round(MINUTES * 60_000);
/** A call not answered within this counts as lost (no result, no error answer). */
const CALL_TIMEOUT_MS = 60_000;
const SAMPLE_MS = 10_000;
const MODERN = '2026-07-28';

if (!existsSync(CLI)) {
  process.stderr.write(`soak: ${CLI} is missing: build first (npm run soak builds; or npm run build).\n`);
  process.exit(2);
}

const started = Date.now();
const elapsed = () => (Date.now() - started) / 1000;
const note = (line: string) => process.stderr.write(`[soak ${elapsed().toFixed(1).padStart(6)}s] ${line}\n`);

// ---- the run ----------------------------------------------------------------------------------

const stats = {
  calls: 0,
  ok: 0,
  lost: 0,
  reads: 0,
  previews: 0,
  writesAttempted: 0,
  writesConfirmed: 0,
  writesFailed: 0,
  replays: 0,
  replaysRefused: 0,
  replaysRan: 0,
  connects: 0,
  connectFailures: 0,
};
const errors = new Map<string, number>();
const countError = (kind: string) => errors.set(kind, (errors.get(kind) ?? 0) + 1);
const confirmed = new Set<string>();
const unanswered = new Set<string>();
let inFlight = 0;
const runId = randomBytes(4).toString('hex');

interface Outcome {
  result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content?: Array<{ type: string; text?: string }> };
  error?: string;
  lost?: boolean;
}

const textOf = (result: NonNullable<Outcome['result']>) => (result.content ?? []).map((part) => part.text ?? '').join(' ');

const latencies: number[] = [];
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Outcome> {
  stats.calls++;
  const sent = performance.now();
  inFlight++;
  const answer: Promise<Outcome> = client.callTool({ name, arguments: args }, { timeout: CALL_TIMEOUT_MS }).then(
    (result): Outcome => ({ result: result as Outcome['result'] }),
    (error: unknown): Outcome => {
      const { kind, lost } = describeThrown(error);
      return { error: kind, lost };
    },
  );
  // A watchdog beyond the client's own timeout: a call that never settles is lost, not waited for forever.
  const watchdog = sleep(CALL_TIMEOUT_MS + 15_000).then((): Outcome => ({ error: 'never settled (lost)', lost: true }));
  const outcome = await Promise.race([answer, watchdog]);
  inFlight--;
  if (!outcome.lost) latencies.push(performance.now() - sent);
  if (outcome.lost) stats.lost++;
  if (outcome.error) countError(outcome.error);
  return outcome;
}

async function connect(path: string, key: string): Promise<Client> {
  for (let attempt = 0; ; attempt++) {
    stats.connects++;
    const client = new Client({ name: 'soak', version: '0' }, { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(path, proxyUrl), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
      return client;
    } catch (error) {
      stats.connectFailures++;
      countError(`connect: ${describeThrown(error).kind}`);
      if (attempt >= 5) throw error;
      await sleep(200);
    }
  }
}

const READS: Array<{ domain: string; tool: string; ops: Array<{ operationId: string; params?: Record<string, unknown> }> }> = [
  { domain: 'contact', tool: 'contact_read', ops: [{ operationId: 'contact.list' }] },
  { domain: 'campaign', tool: 'campaign_read', ops: [{ operationId: 'campaign.list' }, { operationId: 'campaign.analytics' }] },
  { domain: 'inbox', tool: 'inbox_read', ops: [{ operationId: 'inbox.ticket.list' }, { operationId: 'inbox.ticket.stats' }] },
  { domain: 'product', tool: 'product_read', ops: [{ operationId: 'product.list' }] },
  { domain: 'billing', tool: 'billing_get', ops: [{ operationId: 'billing.quota' }, { operationId: 'billing.subscription' }] },
  { domain: 'tenant', tool: 'tenant_get', ops: [{ operationId: 'tenant.setting' }] },
];
const CHANNEL_READS = [{ operationId: 'channel.list' }, { operationId: 'channel.whatsapp.status' }, { operationId: 'channel.whatsapp.templates' }];
const WRITE = 'channel.whatsapp.send';

async function worker(index: number, key: string, until: number): Promise<void> {
  const reads = READS[index % READS.length]!;
  const channel = await connect('/mcp/channel', key);
  const other = await connect(`/mcp/${reads.domain}`, key);
  let writes = 0;
  const random = Math.random;
  while (Date.now() < until) {
    if (random() < WRITE_SHARE) {
      const message = `soak ${runId} c${index} w${writes++}`;
      const params = { msisdn: '6281234567890', message };
      stats.writesAttempted++;
      const preview = await call(channel, 'channel_action', { operationId: WRITE, params });
      const shown = preview.result?.structuredContent;
      if (preview.result?.isError || shown?.outcome !== 'preview') {
        if (preview.result) countError(`write without a preview: ${label(preview.result.isError ? textOf(preview.result) : String(shown?.outcome))}`);
        stats.writesFailed++;
      } else {
        stats.previews++;
        const token = shown.confirmationToken as string;
        const done = await call(channel, 'channel_action', { operationId: WRITE, params, confirmationToken: token });
        if (done.result && !done.result.isError && done.result.structuredContent?.outcome === 'done') {
          stats.writesConfirmed++;
          confirmed.add(message);
          if (random() < REPLAY_SHARE) {
            // The same token again, often on the other replica: must be refused, and run nothing.
            stats.replays++;
            const replay = await call(channel, 'channel_action', { operationId: WRITE, params, confirmationToken: token });
            if (replay.result?.isError && /already used/.test(textOf(replay.result))) stats.replaysRefused++;
            else if (replay.result && !replay.result.isError && replay.result.structuredContent?.outcome === 'done') stats.replaysRan++;
            else if (replay.result) countError(`replay answered otherwise: ${label(textOf(replay.result))}`);
          }
        } else {
          stats.writesFailed++;
          unanswered.add(message);
          if (done.result) countError(`confirmed write refused: ${label(textOf(done.result))}`);
        }
      }
    } else if (random() < 0.5) {
      const op = CHANNEL_READS[Math.floor(random() * CHANNEL_READS.length)]!;
      stats.reads++;
      const read = await call(channel, 'channel_read', op);
      if (read.result?.isError) countError(`read error: ${label(textOf(read.result))}`);
      else if (read.result) stats.ok++;
    } else {
      const op = reads.ops[Math.floor(random() * reads.ops.length)]!;
      stats.reads++;
      const read = await call(other, reads.tool, op);
      if (read.result?.isError) countError(`read error: ${label(textOf(read.result))}`);
      else if (read.result) stats.ok++;
    }
    if (THINK_MS > 0) await sleep(random() * 2 * THINK_MS);
  }
  await Promise.allSettled([channel.close(), other.close()]);
}

// ---- set up -----------------------------------------------------------------------------------

note(`${CLIENTS} clients for ${MINUTES} min over ${KEYS} keys; think ${THINK_MS} ms; writes ${Math.round(WRITE_SHARE * 100)}% of actions`);
const sandbox = await startSandbox({ rateLimit: RATE_LIMIT });
// Enough message quota for the run: a soak measures the service, not the tenant's plan.
sandbox.tenant('A').messageQuota.total = Number.MAX_SAFE_INTEGER;
const keys = Array.from({ length: KEYS }, (_, index) => sandbox.createKey(ALL_SCOPES, { label: `soak-${index}` }));
const redisServer = await startRedis();
note(`sandbox ${sandbox.baseUrl}; redis ${redisServer.url} (pid ${redisServer.pid})`);

const env = {
  PATH: process.env.PATH ?? '',
  ENGAGE_BASE_URL: sandbox.baseUrl,
  ENGAGE_REDIS_URL: redisServer.url,
  ENGAGE_STATE_SECRET: randomBytes(48).toString('base64'),
  ENGAGE_LOG_LEVEL: 'warn',
  // The replicas' drain delay, if the soak is run with one (ENGAGE_HTTP_DRAIN_DELAY_MS=1000 npm run soak).
  ...(process.env.ENGAGE_HTTP_DRAIN_DELAY_MS ? { ENGAGE_HTTP_DRAIN_DELAY_MS: process.env.ENGAGE_HTTP_DRAIN_DELAY_MS } : {}),
};
const replicas = [new Replica('replica A', env, elapsed), new Replica('replica B', env, elapsed)];
let proxyUrl = '';
let proxy: Awaited<ReturnType<typeof startProxy>> | undefined;
const samples: Array<{ at: number; calls: number; errors: number; lost: number; inFlight: number; rss: Array<number | undefined> }> = [];
let sampler: NodeJS.Timeout | undefined;

async function teardown(): Promise<void> {
  if (sampler) clearInterval(sampler);
  await proxy?.close().catch(() => undefined);
  await Promise.allSettled(replicas.map((replica) => replica.stop()));
  await redisServer.stop().catch(() => undefined);
  await sandbox.close().catch(() => undefined);
}
process.once('SIGINT', () => void teardown().then(() => process.exit(130)));

let restart: { at: number; drainMs?: number; exitCode?: number | null; back?: number; samePort?: boolean } | undefined;
try {
  await Promise.all(replicas.map((replica) => replica.start()));
  proxy = await startProxy(replicas.map((replica) => replica.url));
  proxyUrl = proxy.url;
  note(`replicas ${replicas.map((replica) => `${replica.url} (pid ${replica.pid})`).join(', ')}; proxy ${proxyUrl}`);

  let lastCalls = 0;
  let lastErrors = 0;
  const errorTotal = () => [...errors.values()].reduce((sum, count) => sum + count, 0);
  const sample = () => {
    for (const replica of replicas) replica.sample();
    samples.push({
      at: elapsed(),
      calls: stats.calls - lastCalls,
      errors: errorTotal() - lastErrors,
      lost: stats.lost,
      inFlight,
      rss: replicas.map((replica) => rssKB(replica.pid)),
    });
    lastCalls = stats.calls;
    lastErrors = errorTotal();
  };
  sample();
  sampler = setInterval(sample, SAMPLE_MS);

  // ---- the load, and the restart midway -------------------------------------------------------
  const loadStarted = Date.now();
  const until = loadStarted + DURATION_MS;
  const workers = Array.from({ length: CLIENTS }, (_, index) =>
    worker(index, keys[index % keys.length] as string, until).catch((error: unknown) => {
      countError(`client gave up: ${describeThrown(error).kind}`);
    }),
  );
  const restarting = (async () => {
    await sleep(DURATION_MS / 2);
    const target = replicas[1] as Replica;
    restart = { at: elapsed() };
    if (LB_DRAIN_MS > 0) {
      note(`${target.name} out of the proxy's rotation; SIGTERM in ${LB_DRAIN_MS} ms`);
      proxy?.exclude(1, true);
      await sleep(LB_DRAIN_MS);
    }
    note(`SIGTERM to ${target.name} (pid ${target.pid}) with ${inFlight} calls in flight`);
    await target.stop();
    restart.drainMs = target.lastExit?.drainMs;
    restart.exitCode = target.lastExit?.code;
    const port = target.port;
    try {
      await target.start(port);
      restart.samePort = true;
    } catch (error) {
      note(`restart on port ${port} failed (${(error as Error).message}); on a new port`);
      await target.start(0);
      proxy?.setTarget(1, target.url);
      restart.samePort = false;
    }
    proxy?.exclude(1, false);
    restart.back = elapsed();
    note(
      `${target.name} back (pid ${target.pid}) after ${(restart.back - restart.at).toFixed(1)} s; it drained in ${restart.drainMs} ms, exit ${restart.exitCode}`,
    );
  })();
  const progress = setInterval(() => note(`${stats.calls} calls, ${errorTotal()} errors, ${stats.lost} lost, ${inFlight} in flight`), 30_000);
  await Promise.all(workers);
  await restarting;
  clearInterval(progress);
  sample();
  note(`load done after ${((Date.now() - loadStarted) / 1000).toFixed(1)} s`);

  // ---- what the sandbox carried out -----------------------------------------------------------
  const carried = new Map<string, number>();
  for (const entry of sandbox.carriedOut()) {
    const message = entry.params.message;
    if (entry.operationId === WRITE && typeof message === 'string' && message.startsWith(`soak ${runId} `))
      carried.set(message, (carried.get(message) ?? 0) + 1);
  }
  const carriedTotal = [...carried.values()].reduce((sum, count) => sum + count, 0);
  const doubles = [...carried.values()].filter((count) => count > 1).length;
  const confirmedNotCarried = [...confirmed].filter((message) => !carried.has(message)).length;
  const carriedNotConfirmed = [...carried.keys()].filter((message) => !confirmed.has(message));
  const carriedAfterError = carriedNotConfirmed.filter((message) => unanswered.has(message)).length;
  const redis = await connectRedis(redisServer.url);
  const dbsize = await redis.command(['DBSIZE']);
  const redisMemory = /used_memory_human:(\S+)/.exec((await redis.command(['INFO', 'memory'])) as string)?.[1];
  await redis.close();

  // ---- the report -----------------------------------------------------------------------------
  const minutes = (Date.now() - loadStarted) / 60_000;
  const mb = (kb: number | undefined) => (kb === undefined || Number.isNaN(kb) ? '—' : (kb / 1024).toFixed(1));
  const row = (cells: Array<string | number>, widths: number[]) => cells.map((cell, index) => String(cell).padStart(widths[index] ?? 10)).join('  ');
  const out: string[] = [];
  out.push(
    '',
    `Soak: ${CLIENTS} clients (v2 client, ${MODERN}, no elicitation), ${minutes.toFixed(1)} min, 2 replicas + Redis ${redisServer.url.replace(/^redis:\/\//, '')} behind bench/proxy.ts; ${KEYS} keys`,
  );
  out.push('');
  out.push('Calls');
  const figures: Array<[string, string | number]> = [
    ['calls (tool calls sent)', stats.calls],
    ['calls per second', (stats.calls / (minutes * 60)).toFixed(1)],
    ['latency p50 / p95 / p99 / max (ms)', [0.5, 0.95, 0.99, 1].map((q) => quantile(latencies, q).toFixed(0)).join(' / ')],
    ['reads answered ok', stats.ok],
    ['errors (all kinds, below)', [...errors.values()].reduce((sum, count) => sum + count, 0)],
    ['lost calls (no result, no error answer)', stats.lost],
    ['writes attempted / previews', `${stats.writesAttempted} / ${stats.previews}`],
    ['writes confirmed ("done")', stats.writesConfirmed],
    ['writes the sandbox carried out', carriedTotal],
    ['  double writes (one message carried out twice)', doubles],
    ['  confirmed but not carried out', confirmedNotCarried],
    ['  carried out, the answer an error (may have happened)', carriedAfterError],
    ['  carried out, no "done" and no error seen', carriedNotConfirmed.length - carriedAfterError],
    ['writes failed before or at confirmation', stats.writesFailed],
    ['token replays / refused / ran', `${stats.replays} / ${stats.replaysRefused} / ${stats.replaysRan}`],
    ['MCP connections (failed)', `${stats.connects} (${stats.connectFailures})`],
    [
      'proxy: requests / connect-refused retried / 502',
      `${proxy.stats.requests} / ${proxy.stats.retriedRefused} / ${proxy.stats.badGateway} (${proxy.stats.failedAfterReach} after reaching a replica: ${JSON.stringify(proxy.stats.failedAfterReachCodes)})`,
    ],
    ['proxy: forwarded to A / B', `${proxy.upstreams[0]?.forwarded} / ${proxy.upstreams[1]?.forwarded}`],
    [
      `restart of B${LB_DRAIN_MS > 0 ? ` (out of rotation ${LB_DRAIN_MS} ms first)` : ' (SIGTERM while in rotation)'}: at / drain / exit / back at`,
      restart
        ? `${restart.at.toFixed(0)} s / ${restart.drainMs} ms / ${restart.exitCode} / ${restart.back?.toFixed(0)} s${restart.samePort ? ' (same port)' : ' (new port)'}`
        : 'not done',
    ],
    ['Redis keys at the end / memory', `${String(dbsize)} / ${redisMemory}`],
  ];
  const width = Math.max(...figures.map(([name]) => name.length));
  for (const [name, value] of figures) out.push(`  ${name.padEnd(width)}  ${value}`);
  out.push('');
  out.push('Errors by kind');
  if (errors.size === 0) out.push('  none');
  for (const [kind, count] of [...errors].sort((a, b) => b[1] - a[1])) out.push(`  ${String(count).padStart(7)}  ${kind}`);
  out.push('');
  out.push('Every 10 s (RSS of each replica, MB)');
  const widths = [7, 8, 7, 6, 9, 11, 11];
  out.push(row(['t (s)', 'calls', 'errors', 'lost', 'in flight', 'A RSS', 'B RSS'], widths));
  for (const sampleRow of samples)
    out.push(
      row([sampleRow.at.toFixed(0), sampleRow.calls, sampleRow.errors, sampleRow.lost, sampleRow.inFlight, mb(sampleRow.rss[0]), mb(sampleRow.rss[1])], widths),
    );
  out.push('');
  out.push('RSS per process life, after a warm-up of 60 s (or a fifth of the life, if shorter)');
  for (const replica of replicas) {
    replica.lives.forEach((life, index) => {
      const span = (life.to ?? elapsed()) - life.from;
      const warm = life.samples.filter((each) => each.at - life.from >= Math.min(60, span / 5));
      const kbs = warm.map((each) => each.kb);
      const first = kbs[0];
      const last = kbs.at(-1);
      out.push(
        `  ${replica.name} #${index + 1} (pid ${life.pid}, ${span.toFixed(0)} s): ${kbs.length} samples; after warm-up ${mb(first)} → ${mb(last)} MB, min ${mb(Math.min(...kbs))}, max ${mb(Math.max(...kbs))}${first && last ? ` (${(((last - first) / first) * 100).toFixed(1)}%)` : ''}`,
      );
    });
    out.push(`    log lines by level: ${JSON.stringify(replica.levels)}`);
    for (const line of replica.notable.slice(0, 8)) out.push(`    ${line}`);
  }
  const verdict = stats.lost === 0 && doubles === 0 && confirmedNotCarried === 0 && stats.replaysRan === 0;
  out.push('');
  out.push(
    verdict
      ? 'PASS: no lost calls, no double writes, every "done" carried out, no replay ran.'
      : 'FAIL: see lost calls, double writes, confirmed-not-carried and replays above.',
  );
  process.stdout.write(`${out.join('\n')}\n`);
  await teardown();
  process.exit(verdict ? 0 : 1);
} catch (error) {
  process.stderr.write(`soak: ${(error as Error).stack ?? String(error)}\n`);
  for (const replica of replicas) for (const line of replica.notable.slice(-5)) process.stderr.write(`  ${replica.name}: ${line}\n`);
  await teardown();
  process.exit(2);
}
