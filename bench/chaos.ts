// `npm run chaos`: the promise "never sent twice, always told the truth" under mixed faults at once,
// checked against the sandbox's own record of what it carried out. The in-process sandbox, a real
// redis-server, two replicas of the built remote service behind bench/proxy.ts, and stdio channel
// servers sharing one ENGAGE_STATE_DIR (a person with several hosts open); clients of both eras (the
// v1 SDK Client on 2025 sessions, the v2 client pinned to 2026-07-28) make reads and writes: confirmed
// (preview, then the token) and unconfirmed (contact.create under the default, channel.whatsapp.send
// on ENGAGE_CONFIRM=none servers), with and without idempotency keys, repeated on purpose, repeated
// after an unknown outcome, tokens replayed. Meanwhile: the sandbox's injected faults on a share of
// writes, calls cancelled (AbortSignal) and connections closed mid-call, stdio servers killed mid-write
// and started again on the same folder, replicas SIGKILLed and SIGTERMed and restarted, Redis
// restarted (its data gone) and once flushed. Every choice comes from --seed (printed first), each
// actor drawing from its own stream, so a failure replays as far as timing allows.
//
//   npm run chaos -- [--minutes 3] [--clients 12] [--seed N] [--fault-share 0.3] [--keep-logs DIR]
//
// --keep-logs DIR: every server's stderr at debug level (each claim of a write, its mark and how it
// was settled), one file per stdio server process (named by its seat and pid) and per replica.
//
// Checked per intended write (one message or contact, unique to the run): a carried-out write is
// matched to a call that may have sent it (none said "nothing was sent"); an answer "Done" has its
// write in the record; the writes carried out are at most the intents (a repeat counts as one only
// when the model knew the first was carried out, or was warned it may be twice); every call got an
// answer unless this run cancelled it; no API key or key fingerprint in any answer or log line. Each
// write the stdio servers sent that was carried out has its line (done, or unknown: an orphaned one of
// a server killed with it at the API included) in the state folder's audit record, found by its params
// digest after a last server's first turn (its sweep of writes/).
// Exits 1 on any violation, listing each with its calls.
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { keyFingerprint } from '../shared/src/index.js';
import { paramsDigest, remoteAuditSecret } from '../shared/src/call/audit.js';
import { FileGuardStore, readSecret } from '../shared/src/call/file-guard-store.js';
import { connectRedis } from '../packages/http/src/redis.js';
import { seededRandom } from '../packages/sandbox/src/data.js';
import { ALL_SCOPES, type FaultKind, launchServer, type LaunchedServer, startSandbox } from '../packages/sandbox/src/index.js';
import { startRedis } from '../test/redis-server.js';
import { CLI, Replica, describeThrown, label, sleep } from './fleet.js';
import { startProxy } from './proxy.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '3' },
    clients: { type: 'string', default: '12' },
    seed: { type: 'string' },
    'fault-share': { type: 'string', default: '0.3' },
    'keep-logs': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write('Usage: npm run chaos -- [--minutes 3] [--clients 12] [--seed N] [--fault-share 0.3] [--keep-logs DIR]\n');
  process.exit(0);
}
const MINUTES = Number(values.minutes);
const CLIENTS = Math.max(3, Math.floor(Number(values.clients)));
const FAULT_SHARE = Math.min(1, Number(values['fault-share']));
const SEED = values.seed === undefined ? randomBytes(4).readUInt32BE(0) : Number(values.seed);
if (![MINUTES, CLIENTS, FAULT_SHARE, SEED].every(Number.isFinite)) {
  process.stderr.write('chaos: --minutes, --clients, --seed and --fault-share take numbers\n');
  process.exit(2);
}
if (!existsSync(CLI)) {
  process.stderr.write(`chaos: ${CLI} is missing: build first (npm run chaos builds; or npm run build).\n`);
  process.exit(2);
}
const KEEP_LOGS = values['keep-logs'];
if (KEEP_LOGS) mkdirSync(KEEP_LOGS, { recursive: true });
/** Keeps a server's stderr lines in DIR/<name>.log (with --keep-logs). */
const keepLines = (name: string, lines: string[]) => {
  if (KEEP_LOGS && lines.length > 0) appendFileSync(join(KEEP_LOGS, `${name.replace(/[^\w.#=-]+/g, '_')}.log`), `${lines.join('\n')}\n`);
};
const DURATION_MS = Math.round(MINUTES * 60_000);
const CALL_TIMEOUT_MS = 60_000;
const MODERN = '2026-07-28';
const SEND = 'channel.whatsapp.send';
/** Every channel send's number (its message is the intent's id): the audit check digests the params from them. */
const STDIO_MSISDN = '6281234567890';
const CREATE = 'contact.create';

const started = Date.now();
const elapsed = () => (Date.now() - started) / 1000;
const note = (line: string) => process.stderr.write(`[chaos ${elapsed().toFixed(1).padStart(6)}s] ${line}\n`);
process.stdout.write(`chaos seed ${SEED} (replay: npm run chaos -- --seed ${SEED} --minutes ${MINUTES} --clients ${CLIENTS} --fault-share ${FAULT_SHARE})\n`);

/** A seeded generator per actor, so one actor's choices do not depend on another's timing. */
const stream = seededRandom;
type Random = () => number;
const oneOf = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

// ---- what every call answered -------------------------------------------------------------------

interface Result {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content?: Array<{ type: string; text?: string }>;
}
/** What a call's answer says this call did: sent it, sent nothing, may have; `told` when it says the write is in the record. */
type Said = 'sent' | 'nothing' | 'maybe' | 'no answer';
interface Call {
  role: 'first' | 'preview' | 'confirm' | 'replay' | 'repeat' | 'twin' | 'idempotent repeat';
  seat: string;
  /** The stdio server's pid when the call began (a remote seat has none here). */
  pid?: number;
  start: number;
  end: number;
  said: Said;
  /** The answer says the write was carried out (by this call or an earlier one). */
  toldDone: boolean;
  /** The answer (or the preview before it) warned that it may now be done twice. */
  warned: boolean;
  /** A replay of a token whose first use went to the API. */
  spent?: boolean;
  /** This run cancelled it, closed its connection, or killed its server. */
  disrupted?: string;
  text: string;
}
interface Intent {
  id: string;
  operationId: string;
  gated: boolean;
  calls: Call[];
  /** Deliberate repeats: after an answer that said it was carried out, or one that warned. */
  intents: number;
}

const textOf = (result: Result) => (result.content ?? []).map((part) => part.text ?? '').join(' ');
/** Said of this call's own send: nothing went out (what follows may tell of another call's). */
const NOTHING_SENT =
  /nothing was sent|nothing was done now|nothing new was done|has NOT been run|was not run|nothing was run|was not carried out|not sent|nothing was carried out|nothing is sent/;
/** Said of an earlier call's send, repeated or told of: this call sent nothing. */
const TOLD_OF_EARLIER = /nothing was sent again|nothing was done now|nothing new was done/;

function judge(result: Result): Pick<Call, 'said' | 'toldDone' | 'warned' | 'text'> {
  const text = textOf(result);
  const outcome = result.structuredContent?.outcome;
  const warned = /Warning: .* already sent exactly this|carried out twice|have it twice|now has it twice/.test(text);
  const toldDone = outcome === 'done';
  const said = (what: Said) => ({ said: what, toldDone, warned, text });
  if (outcome === 'preview' || outcome === 'declined' || outcome === 'refused') return said('nothing');
  if (outcome === 'done' || outcome === 'unknown') return said(TOLD_OF_EARLIER.test(text) ? 'nothing' : outcome === 'done' ? 'sent' : 'maybe');
  return said(NOTHING_SENT.test(text) ? 'nothing' : 'maybe');
}

const stats = {
  calls: 0,
  answered: 0,
  errors: 0,
  lost: 0,
  disrupted: 0,
  unverified: 0,
  crossed: 0,
  reconnects: 0,
  faults: 0,
  kills: {} as Record<string, number>,
};
const errorKinds = new Map<string, number>();
const countError = (kind: string) => errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
const answers: string[] = [];
const logLines: string[] = [];
const intents: Intent[] = [];

// ---- seats: one MCP client on one server ------------------------------------------------------

interface Seat {
  name: string;
  /** The stdio server's pid, if one is running. */
  pid?(): number | undefined;
  call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<Result>;
  /** Cuts the connection (remote) or kills the server (stdio) while a call may be on its way. */
  disrupt(): void;
  reopen(): Promise<void>;
  close(): Promise<void>;
}

/** `base`: where a new session goes (the proxy; for a 2025 session, one replica: a sticky balancer's choice). */
function remoteSeat(era: 'v1' | 'v2', path: string, key: string, base: () => string, lane: number): Seat {
  let client: { callTool: Seat['call']; close(): Promise<void> } | undefined;
  const open = async () => {
    const url = new URL(path, base());
    const requestInit = { headers: { authorization: `Bearer ${key}` } };
    if (era === 'v1') {
      const v1 = new V1Client({ name: 'chaos-v1', version: '0' }, { capabilities: {} });
      await v1.connect(new V1HttpTransport(url, { requestInit }));
      client = {
        callTool: (name, args, signal) => v1.callTool({ name, arguments: args }, undefined, { signal, timeout: CALL_TIMEOUT_MS }) as Promise<Result>,
        close: () => v1.close(),
      };
    } else {
      const v2 = new V2Client({ name: 'chaos-v2', version: '0' }, { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } });
      await v2.connect(new V2HttpTransport(url, { requestInit }));
      client = {
        callTool: (name, args, signal) => v2.callTool({ name, arguments: args }, { signal, timeout: CALL_TIMEOUT_MS }) as Promise<Result>,
        close: () => v2.close(),
      };
    }
  };
  const seat: Seat = {
    name: `${era} remote ${path} #${lane}`,
    call: async (name, args, signal) => {
      if (!client) await seat.reopen();
      return (client as NonNullable<typeof client>).callTool(name, args, signal);
    },
    disrupt: () => void client?.close().catch(() => undefined),
    reopen: async () => {
      await client?.close().catch(() => undefined);
      client = undefined;
      for (let attempt = 0; ; attempt++) {
        try {
          stats.reconnects++;
          await open();
          return;
        } catch (error) {
          countError(`connect (${era}): ${describeThrown(error).kind}`);
          if (attempt >= 20) throw error;
          await sleep(300);
        }
      }
    },
    close: async () => void (await client?.close().catch(() => undefined)),
  };
  return seat;
}

function stdioSeat(confirm: 'default' | 'none', env: Record<string, string>, lane: number, worker: number): Seat {
  let server: LaunchedServer | undefined;
  // Its pid as launched: the transport forgets it once closed.
  const pids = new WeakMap<LaunchedServer, number | null>();
  const keep = (ended: LaunchedServer) => {
    const lines = ended.stderr().split('\n').filter(Boolean);
    logLines.push(...lines);
    keepLines(`stdio c${worker} #${lane} pid ${pids.get(ended)}`, lines);
  };
  const seat: Seat = {
    name: `v1 stdio channel${confirm === 'none' ? ' ENGAGE_CONFIRM=none' : ''} #${lane}`,
    pid: () => server?.transport.pid ?? undefined,
    call: async (name, args, signal) => {
      if (!server) await seat.reopen();
      return (await (server as LaunchedServer).client.callTool({ name, arguments: args }, undefined, { signal, timeout: CALL_TIMEOUT_MS })) as Result;
    },
    disrupt: () => {
      const pid = server?.transport.pid;
      if (pid) {
        stats.kills['stdio server SIGKILL'] = (stats.kills['stdio server SIGKILL'] ?? 0) + 1;
        keepLines('kills', [`${Date.now()} SIGKILL stdio c${worker} #${lane} pid ${pid}`]);
        process.kill(pid, 'SIGKILL');
      }
    },
    reopen: async () => {
      const old = server;
      server = undefined;
      if (old) {
        await old.close().catch(() => undefined);
        keep(old);
      }
      stats.reconnects++;
      server = await launchServer('channel', { ...env, ...(confirm === 'none' ? { ENGAGE_CONFIRM: 'none' } : {}) });
      pids.set(server, server.transport.pid);
    },
    close: async () => {
      if (!server) return;
      await server.close().catch(() => undefined);
      keep(server);
    },
  };
  return seat;
}

// ---- one call, and one intended write ---------------------------------------------------------

type Disruption = 'abort' | 'cut' | undefined;

async function call(
  seat: Seat,
  tool: string,
  args: Record<string, unknown>,
  role: Call['role'],
  intent: Intent,
  disruption: Disruption,
  random: Random,
): Promise<Call> {
  stats.calls++;
  const controller = new AbortController();
  const start = Date.now();
  const pid = seat.pid?.();
  let disrupted: string | undefined;
  const timer =
    disruption &&
    setTimeout(
      () => {
        disrupted = disruption === 'abort' ? 'cancelled (AbortSignal)' : seat.name.includes('stdio') ? 'server killed' : 'connection closed';
        if (disruption === 'abort') controller.abort();
        else seat.disrupt();
      },
      Math.floor(random() * 400),
    );
  const watchdog = sleep(CALL_TIMEOUT_MS + 15_000).then(() => 'never settled' as const);
  const answer = await Promise.race([
    seat.call(tool, args, controller.signal).then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    ),
    watchdog,
  ]);
  if (timer) clearTimeout(timer);
  const end = Date.now();
  let record: Call;
  if (answer === 'never settled' || 'error' in answer) {
    // The v2 client rejects a cancelled request as a timeout: a cancel of this run's is labelled by its message, not as lost.
    const thrown = answer === 'never settled' ? undefined : (answer.error as Error);
    const kind = !thrown ? 'never settled (lost)' : disrupted ? `${thrown.name}: ${label(thrown.message)}` : describeThrown(thrown).kind;
    const lost = !thrown || describeThrown(thrown).lost;
    if (disrupted) stats.disrupted++;
    else if (lost) stats.lost++;
    else stats.errors++;
    countError(`${seat.name}: ${disrupted ? `${disrupted}: ` : ''}${kind}`);
    record = {
      role,
      seat: seat.name,
      ...(pid ? { pid } : {}),
      start,
      end,
      said: 'no answer',
      toldDone: false,
      warned: false,
      text: kind,
      ...(disrupted ? { disrupted } : {}),
    };
    // The connection may be gone (a killed replica's session, a killed stdio server): a fresh one for the next call.
    await seat.reopen().catch((error: unknown) => countError(`reopen: ${describeThrown(error).kind}`));
  } else {
    stats.answered++;
    answers.push(JSON.stringify(answer.result));
    record = { role, seat: seat.name, ...(pid ? { pid } : {}), start, end, ...judge(answer.result), ...(disrupted ? { disrupted } : {}) };
    if (disrupted && seat.name.includes('stdio')) await seat.reopen().catch(() => undefined);
  }
  intent.calls.push(record);
  return record;
}

const FAULTS: FaultKind[] = ['delay', 'status', 'html', 'reset-before', 'reset-after', 'truncated', 'not-envelope', 'slow-body', 'rate-limit', 'redirect'];

function statusFault(random: Random): { status: number; afterWork: boolean } {
  const status = oneOf(random, [500, 502, 503, 400, 409]);
  return { status, afterWork: status >= 500 && random() < 0.5 };
}

function armFault(random: Random, operationId: string): void {
  const kind = oneOf(random, FAULTS);
  stats.faults++;
  sandbox.injectFault({
    kind,
    operationId,
    ...(kind === 'delay' || kind === 'slow-body' ? { delayMs: 200 + Math.floor(random() * 1500) } : {}),
    // A 4xx says nothing was done (the spec's word): only a 5xx may come after the work.
    ...(kind === 'status' ? statusFault(random) : {}),
    ...(kind === 'html' ? { afterWork: random() < 0.5 } : {}),
    ...(kind === 'rate-limit' ? { retryAfter: oneOf(random, ['0', '1', '2']) } : {}),
  });
}

/**
 * One write the model means to make, with what may follow it: a replay, a repeat, an idempotent repeat; or made twice at
 * once on two seats (two hosts on one state folder; two sessions, or two requests of the proxy, on two replicas).
 */
async function write(
  seats: Seat[],
  tool: string,
  operationId: string,
  gated: boolean,
  params: Record<string, unknown>,
  id: string,
  random: Random,
): Promise<void> {
  const intent: Intent = { id, operationId, gated, calls: [], intents: 1 };
  intents.push(intent);
  const idempotencyKey = random() < 0.3 ? `ck-${id.replace(/\s+/g, '-')}` : undefined;
  const base = { operationId, params, ...(idempotencyKey ? { idempotencyKey } : {}) };
  const disruption = (): Disruption => {
    const roll = random();
    return roll < 0.1 ? 'abort' : roll < 0.15 ? 'cut' : undefined;
  };
  /** One attempt: the call, or the preview and its confirmation. Returns the last call. */
  const attempt = async (role: Call['role'], seat = oneOf(random, seats)): Promise<Call | undefined> => {
    if (random() < FAULT_SHARE) armFault(random, operationId);
    if (!gated) return call(seat, tool, base, role, intent, disruption(), random);
    const preview = await call(seat, tool, base, role === 'first' ? 'preview' : role, intent, undefined, random);
    const token = /confirmationToken "([^"]+)"/.exec(preview.text)?.[1];
    if (!token) return preview;
    const confirmed = await call(seat, tool, { ...base, confirmationToken: token }, 'confirm', intent, disruption(), random);
    if (preview.warned) confirmed.warned = true;
    if (confirmed.said !== 'no answer' && random() < 0.15) {
      const replay = await call(seat, tool, { ...base, confirmationToken: token }, 'replay', intent, undefined, random);
      // A token whose call went to the API is spent: its replay runs nothing. (One refused before its yes was looked at,
      // by an idempotency key still held, was not spent: its replay may run.)
      replay.spent = confirmed.said === 'sent' || confirmed.said === 'maybe';
    }
    return confirmed;
  };
  let last: Call | undefined;
  if (seats.length > 1 && random() < 0.12) {
    // The same write twice at once: one goes out, the other is refused or told; a twin is a new intent only if warned.
    const both = await Promise.all([attempt('first', seats[0]), attempt('twin', seats[1])]);
    if (intent.calls.some((each) => each.warned)) intent.intents++;
    last = both.find((each) => each?.toldDone) ?? both.find((each) => each?.said === 'maybe' || each?.said === 'no answer') ?? both[0];
  } else last = await attempt('first');
  for (let repeats = 0; last && repeats < 2; repeats++) {
    const knownDone = last.toldDone;
    const unsure = last.said === 'maybe' || last.said === 'no answer';
    if (idempotencyKey && random() < 0.3) {
      await call(oneOf(random, seats), tool, base, 'idempotent repeat', intent, undefined, random);
      continue;
    }
    if (!((unsure && random() < 0.7) || (knownDone && random() < 0.1))) break;
    if (unsure) await sleep(random() * 1500);
    const before = intent.calls.length;
    last = await attempt('repeat');
    // A repeat is a new intent when the model knew the write was carried out, or the repeat warned of twice; or when
    // this run cancelled the repeat of a write that needs no yes: its answer, which would tell, was never read.
    const repeat = intent.calls.slice(before);
    if (knownDone || repeat.some((each) => each.warned)) intent.intents++;
    else if (!gated && repeat.some((each) => each.disrupted)) {
      intent.intents++;
      stats.unverified++;
    }
  }
}

async function worker(index: number, seats: Seat[], contactSeats: Seat[], until: number): Promise<void> {
  const seat = seats[0] as Seat;
  const random = stream(SEED + index * 7919);
  let made = 0;
  while (Date.now() < until) {
    const roll = random();
    const id = `chaos ${runId} c${index} w${made++}`;
    if (roll < 0.3) {
      const intent: Intent = { id: `${id} read`, operationId: 'channel.list', gated: false, calls: [], intents: 0 };
      await call(seat, 'channel_read', { operationId: 'channel.list' }, 'first', intent, undefined, random);
    } else if (contactSeats.length > 0 && roll < 0.55) {
      const params = { name: id, msisdn: `62812${String(100_000 + index * 10_000 + made).padStart(7, '0')}` };
      await write(contactSeats, 'contact_action', CREATE, false, params, id, random);
    } else {
      const gated = !seat.name.includes('ENGAGE_CONFIRM=none');
      await write(seats, 'channel_action', SEND, gated, { msisdn: STDIO_MSISDN, message: id }, id, random);
    }
    await sleep(random() * 200);
  }
  await Promise.allSettled([...seats, ...contactSeats].map((each) => each.close()));
}

// ---- the faults of the machinery --------------------------------------------------------------

/** The remote audit record's lines read just before each loss of Redis's data (and at the end). */
const remoteLines = new Set<string>();
/** Each loss of Redis's data: when the record was read before it, and when the loss was over. */
const redisLosses: Array<{ readAt: number; lostAt: number }> = [];

/** Reads the remote audit record before Redis loses it (or at the end): its lines are checked with the last. When it was read. */
async function keepRemoteRecord(): Promise<number> {
  const redis = await connectRedis(redisServer.url);
  try {
    const lists = remoteKeys.map((key) => redis.command(['LRANGE', `engage:audit:{${keyFingerprint(key).slice(0, 16)}}`, 0, -1]));
    for (const lines of await Promise.all(lists)) for (const line of lines as string[]) remoteLines.add(line);
  } catch (error) {
    note(`the remote audit record could not be read: ${(error as Error).message}`);
  } finally {
    await redis.close();
  }
  return Date.now();
}

type Event = 'replica SIGKILL' | 'replica SIGTERM' | 'Redis restart' | 'Redis FLUSHALL';

async function machineryChaos(until: number): Promise<void> {
  const random = stream(SEED ^ 0x5eed);
  // Each loss of Redis's data refuses every remote write for 75 s (README "Several replicas"): two of them, well apart.
  const events: Event[] = ['replica SIGKILL', 'Redis restart', 'replica SIGTERM', 'replica SIGKILL', 'Redis FLUSHALL'];
  const gap = DURATION_MS / (events.length + 1);
  for (const [index, event] of events.entries()) {
    await sleep(Math.max(0, started + gap * (index + 1) * (0.8 + random() * 0.4) - Date.now()));
    if (Date.now() > until) break;
    stats.kills[event] = (stats.kills[event] ?? 0) + 1;
    if (event === 'Redis restart') {
      const readAt = await keepRemoteRecord();
      note('Redis restarted (its data gone)');
      await redisServer.restart();
      redisLosses.push({ readAt, lostAt: Date.now() });
    } else if (event === 'Redis FLUSHALL') {
      const readAt = await keepRemoteRecord();
      note('Redis FLUSHALL');
      const redis = await connectRedis(redisServer.url);
      await redis.command(['FLUSHALL']);
      await redis.close();
      redisLosses.push({ readAt, lostAt: Date.now() });
    } else {
      const target = oneOf(random, replicas);
      note(`${event} to ${target.name} (pid ${target.pid})`);
      await target.stop(event === 'replica SIGKILL' ? 'SIGKILL' : 'SIGTERM');
      await sleep(500 + random() * 2000);
      await target.start(target.port).catch(async (error: unknown) => {
        note(`${target.name} restart on its port failed (${(error as Error).message}); a new port`);
        await target.start(0);
        proxy?.setTarget(replicas.indexOf(target), target.url);
      });
      note(`${target.name} back (pid ${target.pid})`);
    }
  }
}

// ---- the checks -------------------------------------------------------------------------------

function check(carried: Map<string, number[]>): string[] {
  const violations: string[] = [];
  const show = (intent: Intent) =>
    intent.calls
      .map(
        (each) =>
          `      ${each.role} on ${each.seat}${each.pid ? ` (pid ${each.pid})` : ''} [${each.start - started}..${each.end - started} ms; at ${each.start}] ${each.said}${each.toldDone ? ' (told done)' : ''}${each.warned ? ' (warned)' : ''}${each.disrupted ? ` (${each.disrupted})` : ''}: ${label(each.text).slice(0, 80)} | ${each.text.replace(/\s+/g, ' ').slice(0, 260)}`,
      )
      .join('\n');
  for (const intent of intents) {
    if (intent.intents === 0) continue;
    const times = (carried.get(intent.id) ?? []).map((at) => at - started);
    const say = (what: string) =>
      violations.push(`${what}: ${intent.operationId} "${intent.id}" carried out ${times.length}× at [${times.join(', ')}] ms\n${show(intent)}`);
    // Each carried-out write needs a call that may have sent it, begun before it (the one with the earliest end first).
    const capable = intent.calls
      .filter((each) => each.said === 'sent' || each.said === 'maybe' || each.said === 'no answer')
      .map((each) => ({ ...each, used: false }));
    // The latest a call could have sent it: a "Done" by its answer; one of unknown outcome, or unanswered, at any time after.
    const latest = (each: Call) => (each.said === 'sent' ? each.end : Number.POSITIVE_INFINITY);
    for (const at of times) {
      const match = capable
        .filter((each) => !each.used && each.start - started <= at && (each.said !== 'sent' || each.end - started >= at))
        .sort((a, b) => latest(a) - latest(b))[0];
      if (match) match.used = true;
      else say('carried out, but no call that may have sent it (each said nothing was sent, or had answered)');
    }
    for (const each of intent.calls) {
      if (each.said === 'sent' && !times.some((at) => at <= each.end - started)) say(`a "Done" (${each.role}) not in the record by its answer`);
      else if (each.toldDone && times.length === 0) say(`told done (${each.role}), never in the record`);
    }
    // A cancel that crossed the answer: the write was carried out before this run cancelled the call, so the server had
    // likely answered (read as done) before the cancel reached it; no server can tell that a host dropped an answer it sent.
    const crossed = intent.calls.some(
      (each) => each.disrupted?.startsWith('cancelled') && times.some((at) => at >= each.start - started && at <= each.end - started),
    );
    if (times.length > intent.intents && crossed) stats.crossed++;
    else if (times.length > intent.intents) say(`carried out ${times.length}× for ${intent.intents} intent(s) (a repeat neither known nor warned)`);
    for (const each of intent.calls) if (each.role === 'replay' && each.spent && each.said === 'sent') say('a spent token, replayed, ran');
  }
  return violations;
}

/**
 * The stdio servers' writes carried out without an audit line: each needs one with its params' digest and outcome done
 * or unknown. A store's turn first, as a server started now would make at its first write: orphaned marks of servers
 * killed late in the run (none of them started again and wrote since) get their lines in its sweep.
 */
async function auditGaps(carried: Map<string, number[]>): Promise<{ gaps: string[]; lines: number; orphaned: number }> {
  const store = new FileGuardStore(stateDir);
  await store.ready();
  await store.take('chaos audit check', 0, 0, Date.now() + 60_000);
  const secret = readSecret(stateDir);
  const path = join(stateDir, 'audit.jsonl');
  const record = existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { paramsDigest?: string; outcome?: string; orphaned?: boolean })
    : [];
  const ended = new Map<string, number>();
  for (const line of record)
    if (line.paramsDigest && (line.outcome === 'done' || line.outcome === 'unknown')) ended.set(line.paramsDigest, (ended.get(line.paramsDigest) ?? 0) + 1);
  const gaps: string[] = [];
  for (const intent of intents) {
    if (intent.operationId !== SEND || !intent.calls.some((each) => each.seat.includes('stdio'))) continue;
    const times = carried.get(intent.id) ?? [];
    const lines = ended.get(paramsDigest(secret, SEND, { msisdn: STDIO_MSISDN, message: intent.id })) ?? 0;
    if (lines < times.length)
      gaps.push(
        `carried out ${times.length}× but ${lines} audit line(s) done or unknown: ${SEND} "${intent.id}" (calls: ${intent.calls.map((each) => `${each.role} ${each.said}${each.disrupted ? ` (${each.disrupted})` : ''}`).join(', ')})`,
      );
  }
  return { gaps, lines: record.length, orphaned: record.filter((line) => line.orphaned).length };
}

/**
 * Every remote channel send carried out has a done or unknown line in its key's Redis record (read
 * before each loss of Redis's data and at the end), or one still to come: kept with its mark in
 * flight (its replica may be dead: the lease, 3 minutes, outlives a short run) or owed as an
 * orphan's. Sends carried out from 2 s before the record was read until the loss was over are not
 * checked (their line may have been appended between the read and the loss: Redis serves on a while
 * after its SIGTERM), nor those carried out before a loss that no call was
 * told were sent (their replica died with them, and the loss took the line kept with their mark).
 */
async function remoteAuditGaps(carried: Map<string, number[]>): Promise<{ gaps: string[]; lines: number; pending: number; checked: number }> {
  await keepRemoteRecord();
  const redis = await connectRedis(redisServer.url);
  try {
    const secret = remoteAuditSecret(new TextEncoder().encode(env.ENGAGE_STATE_SECRET));
    const record = [...remoteLines].map((line) => JSON.parse(line) as { paramsDigest?: string; outcome?: string });
    const ended = countBy(record.filter((line) => line.outcome === 'done' || line.outcome === 'unknown').map((line) => line.paramsDigest));
    const pendingLines = await linesToCome(redis);
    const pending = countBy(pendingLines.map((line) => line.paramsDigest));
    const nearLoss = (at: number) => redisLosses.some(({ readAt, lostAt }) => at > readAt - 2_000 && at <= lostAt);
    const gaps: string[] = [];
    let checked = 0;
    for (const intent of intents) {
      const times = carried.get(intent.id) ?? [];
      if (intent.operationId !== SEND || !intent.calls.some((each) => each.seat.includes('remote')) || times.some(nearLoss)) continue;
      // Its replica died with it at the API (no call was told it was or may have been sent), and Redis then lost its mark: the line kept
      // with that mark was held by Redis and that replica alone, both gone.
      if (times.every((at) => redisLosses.some(({ lostAt }) => at < lostAt)) && !intent.calls.some((each) => each.said === 'sent' || each.said === 'maybe'))
        continue;
      checked += times.length;
      const digest = paramsDigest(secret, SEND, { msisdn: STDIO_MSISDN, message: intent.id });
      const lines = (ended.get(digest) ?? 0) + (pending.get(digest) ?? 0);
      if (lines < times.length)
        gaps.push(
          `remote: carried out ${times.length}× but ${lines} audit line(s) done, unknown or to come: ${SEND} "${intent.id}" ${remoteStory(intent, times)}`,
        );
    }
    return { gaps, lines: record.length, pending: pendingLines.length, checked };
  } finally {
    await redis.close();
  }
}

/** When a remote write was carried out and called, against the run's start and Redis's losses, for a gap's reader. */
function remoteStory(intent: Intent, times: number[]): string {
  const calls = intent.calls.map(
    (each) => `${each.role} on ${each.seat} [${each.start - started}..${each.end - started} ms] ${each.said}${each.disrupted ? ` (${each.disrupted})` : ''}`,
  );
  const losses = redisLosses.map(({ readAt, lostAt }) => `${readAt - started}..${lostAt - started}`).join(', ');
  return `(carried out at ${times.map((at) => at - started).join(', ')} ms; Redis lost at ${losses} ms; calls: ${calls.join('; ')})`;
}

/** The lines kept with marks in flight and the orphans' lines owed, in Redis (redis-guard-store.ts). */
async function linesToCome(redis: Awaited<ReturnType<typeof connectRedis>>): Promise<Array<{ paramsDigest?: string }>> {
  const kept: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = (await redis.command(['SCAN', cursor, 'MATCH', 'engage:guard:write:*', 'COUNT', 1000])) as [string, string[]];
    for (const key of keys) {
      const [outcome, audit] = (await redis.command(['HMGET', key, 'outcome', 'audit'])) as [string | null, string | null];
      if (outcome === 'in-flight' && audit) kept.push(audit);
    }
    cursor = next;
  } while (cursor !== '0');
  const owed = (await redis.command(['HVALS', 'engage:guard:orphan-lines'])) as string[];
  return [...kept, ...owed].map((line) => JSON.parse(line) as { paramsDigest?: string });
}

const countBy = (values: Array<string | undefined>) => {
  const counts = new Map<string, number>();
  for (const value of values) if (value) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
};

function leaks(keys: string[]): string[] {
  const secrets = keys.flatMap((key) => [key, keyFingerprint(key), keyFingerprint(key).slice(0, 16)]);
  const found: string[] = [];
  for (const [where, lines] of [
    ['answer', answers],
    ['log line', logLines],
  ] as const)
    for (const line of lines) {
      const secret = secrets.find((each) => line.includes(each));
      if (secret) found.push(`${where} holds ${secret === keys.find((key) => key === secret) ? 'a key' : 'a key fingerprint'}: ${line.slice(0, 200)}`);
    }
  return found;
}

// ---- set up and run ---------------------------------------------------------------------------

const runId = randomBytes(4).toString('hex');
const sandbox = await startSandbox({ rateLimit: 60_000 });
sandbox.tenant('A').messageQuota.total = Number.MAX_SAFE_INTEGER;
const remoteKeys = [0, 1].map((index) => sandbox.createKey(ALL_SCOPES, { label: `chaos-${index}` }));
const stdioKey = sandbox.createKey(ALL_SCOPES, { label: 'chaos-stdio' });
const redisServer = await startRedis();
const stateDir = mkdtempSync(join(tmpdir(), 'engage-chaos-state-'));
const env = {
  PATH: process.env.PATH ?? '',
  ENGAGE_BASE_URL: sandbox.baseUrl,
  ENGAGE_REDIS_URL: redisServer.url,
  ENGAGE_STATE_SECRET: randomBytes(48).toString('base64'),
  ENGAGE_LOG_LEVEL: KEEP_LOGS ? 'debug' : 'info',
};
const replicas = [new Replica('replica A', env, elapsed), new Replica('replica B', env, elapsed)];
for (const replica of replicas)
  replica.onLine = (line) => {
    logLines.push(line);
    keepLines(`${replica.name} pid ${replica.pid}`, [line]);
  };
let proxy: Awaited<ReturnType<typeof startProxy>> | undefined;
const stdioEnv = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: stdioKey, ENGAGE_STATE_DIR: stateDir, ENGAGE_LOG_LEVEL: KEEP_LOGS ? 'debug' : 'info' };

async function teardown(): Promise<void> {
  await proxy?.close().catch(() => undefined);
  await Promise.allSettled(replicas.map((replica) => replica.stop()));
  await redisServer.stop().catch(() => undefined);
  await sandbox.close().catch(() => undefined);
  // Kept with the logs: what the state folder held at the end (its writes/ entries) is part of a trace.
  if (KEEP_LOGS) process.stderr.write(`chaos: the state folder is kept: ${stateDir}\n`);
  else rmSync(stateDir, { recursive: true, force: true });
}
process.once('SIGINT', () => void teardown().then(() => process.exit(130)));

try {
  await Promise.all(replicas.map((replica) => replica.start()));
  proxy = await startProxy(replicas.map((replica) => replica.url));
  const proxyUrl = (proxy as { url: string }).url;
  note(
    `sandbox ${sandbox.baseUrl}; redis ${redisServer.url}; replicas ${replicas.map((replica) => replica.url).join(', ')}; proxy ${proxyUrl}; state ${stateDir}`,
  );
  const until = Date.now() + DURATION_MS;
  // A third of the clients on stdio (alternately asking for a yes and not), the rest remote, alternating eras.
  const workers = Array.from({ length: CLIENTS }, async (_, index) => {
    const key = remoteKeys[index % remoteKeys.length] as string;
    const era = index % 2 === 0 ? 'v1' : 'v2';
    // bench/proxy.ts routes each request in turn; a 2025 session lives on its replica (README: sticky sessions), so a v1
    // client opens each session on one replica, the next one in turn that is up, as a sticky balancer would.
    let opened = index;
    const base = () => {
      if (era === 'v2') return proxyUrl;
      opened++;
      const order = [replicas[opened % 2], replicas[(opened + 1) % 2]] as Replica[];
      return (order.find((replica) => replica.pid !== undefined) ?? (order[0] as Replica)).url;
    };
    // Two of each: two stdio servers on the one state folder; two sessions (for v1, on the two replicas in turn).
    const stdio = index % 3 === 2;
    const seats = [1, 2].map((lane) =>
      stdio ? stdioSeat(index % 2 === 0 ? 'default' : 'none', stdioEnv, lane, index) : remoteSeat(era, '/mcp/channel', key, base, lane),
    );
    const contactSeats = stdio ? [] : [1, 2].map((lane) => remoteSeat(era, '/mcp/contact', key, base, lane));
    for (const each of [...seats, ...contactSeats]) await each.reopen();
    return worker(index, seats, contactSeats, until);
  }).map((running) => running.catch((error: unknown) => countError(`client gave up: ${describeThrown(error).kind}`)));
  const progress = setInterval(() => note(`${stats.calls} calls, ${stats.errors} errors, ${stats.lost} lost, ${stats.disrupted} disrupted`), 30_000);
  await Promise.all([...workers, machineryChaos(until)]);
  clearInterval(progress);
  // Writes cut off mid-call may still reach the API: wait, so "not sent" is checked as "not ever".
  note('load done; waiting 20 s for writes still on their way');
  await sleep(20_000);

  const carried = new Map<string, number[]>();
  for (const entry of sandbox.carriedOut()) {
    const id = entry.operationId === SEND ? entry.params.message : entry.operationId === CREATE ? entry.params.name : undefined;
    if (typeof id === 'string' && id.startsWith(`chaos ${runId} `)) carried.set(id, [...(carried.get(id) ?? []), entry.at]);
  }
  const audit = await auditGaps(carried);
  const remoteAudit = await remoteAuditGaps(carried);
  await teardown();
  const violations = [...check(carried), ...audit.gaps, ...remoteAudit.gaps];
  const leaked = leaks([...remoteKeys, stdioKey]);
  const writes = intents.filter((intent) => intent.intents > 0);
  const by = (said: Said) => writes.flatMap((intent) => intent.calls).filter((each) => each.said === said).length;
  const out = [
    '',
    `Chaos: seed ${SEED}, ${CLIENTS} clients (v1 and v2 remote, v1 stdio), ${MINUTES} min, fault share ${FAULT_SHARE}`,
    `  calls ${stats.calls}: answered ${stats.answered}, errors ${stats.errors}, lost ${stats.lost}, disrupted by this run ${stats.disrupted}; reconnects ${stats.reconnects}`,
    `  intended writes ${writes.length} (${writes.filter((intent) => intent.gated).length} asking for a yes), intents with repeats ${writes.reduce((sum, intent) => sum + intent.intents, 0)}; carried out ${[...carried.values()].reduce((sum, each) => sum + each.length, 0)}`,
    `  write calls said: sent ${by('sent')}, nothing ${by('nothing')}, maybe ${by('maybe')}, no answer ${by('no answer')}`,
    `  faults injected ${stats.faults}; machinery: ${JSON.stringify(stats.kills)}`,
    `  not checked: repeats this run cancelled (their "twice" unread) ${stats.unverified}; doubles after a cancel that crossed the answer ${stats.crossed}`,
    `  log lines read ${logLines.length}, answers read ${answers.length}`,
    `  stdio audit record: ${audit.lines} lines, ${audit.orphaned} of them orphaned (a server killed with its write at the API); stdio writes carried out without a line: ${audit.gaps.length}`,
    `  remote audit record (Redis, read before each loss and at the end): ${remoteAudit.lines} lines, ${remoteAudit.pending} to come (marks in flight, orphans owed); remote sends carried out without a line: ${remoteAudit.gaps.length} of ${remoteAudit.checked}`,
    '',
    'Write answers by kind (the 12 most frequent; previews aside)',
    ...[
      ...writes
        .flatMap((intent) => intent.calls)
        .filter((each) => each.said !== 'no answer' && !each.text.startsWith('Confirmation needed'))
        .reduce(
          (kinds, each) =>
            kinds.set(`${each.said}: ${label(each.text).slice(0, 100)}`, (kinds.get(`${each.said}: ${label(each.text).slice(0, 100)}`) ?? 0) + 1),
          new Map<string, number>(),
        ),
    ]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([kind, count]) => `  ${String(count).padStart(6)}  ${kind}`),
    '',
    'Errors by kind',
    ...[...errorKinds].sort((a, b) => b[1] - a[1]).map(([kind, count]) => `  ${String(count).padStart(6)}  ${kind}`),
    '',
    `Violations: ${violations.length + leaked.length + stats.lost}`,
    ...(stats.lost ? [`  ${stats.lost} call(s) lost (no answer, not cancelled by this run)`] : []),
    ...violations.map((each) => `  ${each}`),
    ...leaked.map((each) => `  ${each}`),
  ];
  process.stdout.write(`${out.join('\n')}\n${violations.length + leaked.length + stats.lost === 0 ? 'PASS' : 'FAIL'} (seed ${SEED})\n`);
  process.exit(violations.length + leaked.length + stats.lost === 0 ? 0 : 1);
} catch (error) {
  process.stderr.write(`chaos: ${(error as Error).stack ?? String(error)}\n`);
  await teardown();
  process.exit(2);
}
