// The stdio entry every domain's bin calls: read the environment, serve both protocol eras with
// the SDK's stdio entry, and exit promptly and cleanly when the host goes away. Only the
// protocol reaches stdout.
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { StdioServerTransport, serveStdio, type StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import { FileGuardStore } from '../call/file-guard-store.js';
import { GuardStateError, type GuardStore } from '../call/guard-store.js';
import type { Domain } from '../model/types.js';
import { loadConfig, loadDotenvSafely, misspelledSettings, type ConfigResult } from '../model/config.js';
import { createLogger, type Logger } from '../safe/log.js';
import type { DomainManifest } from '../model/manifest.js';
import { endOfStart } from './end-of-start.js';
import { createServer, secretsOf, type EngageServer } from './server.js';
import { startTelemetry, type Telemetry } from './telemetry.js';

/** No request needs more than this (arguments over 4 MiB are refused anyway); the SDK's reader stops at 10 MiB. */
const MAX_LINE_BYTES = 8 * 1024 * 1024;
/** How long a stopping server waits for its writes at the API: a host that closes stdin waits a while before it kills (MCP's stdio shutdown). */
const WRITES_WAIT_MS = 10_000;
/** How long a write cut off at the stop is given to note its unknown outcome (its files, its audit line). */
const CUT_NOTED_MS = 2_000;

/**
 * Passes newline-delimited input through a whole line at a time, dropping any line longer than the
 * limit whole: a prefix of it may itself be a valid message (a delete, say), so none of it passes.
 */
export class LineLimit extends Transform {
  /** The pieces of the line being read, held until its newline (at most maxBytes). */
  private pending: Buffer[] = [];
  private lineBytes = 0;
  private dropping = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onDrop: (maxBytes: number) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      const end = newline < 0 ? chunk.length : newline + 1;
      this.addToLine(chunk.subarray(start, end));
      if (newline >= 0) this.endLine();
      start = end;
    }
    done();
  }

  private addToLine(piece: Buffer): void {
    if (this.dropping) return;
    this.lineBytes += piece.length;
    if (this.lineBytes <= this.maxBytes) {
      this.pending.push(piece);
      return;
    }
    this.dropping = true;
    this.pending = [];
    this.onDrop(this.maxBytes);
  }

  private endLine(): void {
    if (!this.dropping) this.push(this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending));
    this.pending = [];
    this.lineBytes = 0;
    this.dropping = false;
  }
}

export async function runStdioServer(manifest: DomainManifest, loadCatalog: () => Promise<Domain>): Promise<void> {
  // A log nobody reads any more (the host closed its end): unheard, a line's EPIPE was an uncaught
  // error whose own log line failed the same way, over and over. What cannot be written is dropped.
  process.stderr.on('error', () => undefined);
  const { result, log, operationIds } = configure(manifest);
  const guardStore = guardStoreOf(result, log);
  // Off unless the environment names an OTLP endpoint or exporter, for either signal (telemetry.ts
  // telemetrySignals); then the SDK loads now, before the first call.
  const telemetry = await startTelemetry(process.env, log, { serviceName: `engage-mcp-${manifest.name}` });
  // The first tool call loads the catalog: the start is over (the launcher lets V8's optimizer go).
  const catalogAfterStart = () => {
    endOfStart();
    return loadCatalog();
  };
  const engage = createServer(manifest, catalogAfterStart, result, { log, ...(guardStore ? { guardStore } : {}), ...(telemetry ? { telemetry } : {}) });
  const connection = serveOverStdio(engage, log);
  stopWhenTheHostGoes(engage, connection, telemetry, log);
  // A server must outlive any one bad request.
  process.on('uncaughtException', (error) => log.error(`uncaught: ${error.stack ?? error.message}`));
  process.on('unhandledRejection', (reason) =>
    log.error(`unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`),
  );
  announceReady(result, engage, operationIds, log);
}

/**
 * The configuration from the environment (a .env filling in what it does not set), and the log it
 * sets up; what is wrong with either is logged at once, and the server still starts to say so.
 */
function configure(manifest: DomainManifest): { result: ConfigResult; log: Logger; operationIds: string[] } {
  // A .env in the working directory fills in what the host's environment does not set (never the safety settings).
  const dotenv = loadDotenvSafely(process.env, process.cwd());
  Object.assign(process.env, dotenv.values);
  const operationIds = manifest.tools.flatMap((tool) => tool.operations.map((op) => op.id));
  const result = loadConfig(process.env, manifest.name, operationIds);
  const level = result.ok ? result.config.logLevel : result.logLevel;
  const log = createLogger(`engage-mcp-${manifest.name}`, level, secretsOf(result));
  for (const warning of dotenv.warnings) log.error(warning);
  const misspelled = misspelledSettings(process.env);
  if (misspelled) log.error(misspelled);
  if (!result.ok) {
    log.error(`not configured; every tool call will answer with this until it is fixed: ${result.problems.join(' ')}`);
  }
  return { result, log, operationIds };
}

/** The guardrails' state in the user's state directory, shared by the seven servers of this machine; made on the first write. */
function guardStoreOf(result: ConfigResult, log: Logger): (() => GuardStore) | undefined {
  const guardrails = result.ok ? result.config.guardrails : undefined;
  const stateDir = guardrails?.stateDir;
  if (guardrails && stateDir === undefined) log.warn(`${NO_STATE_DIR}: until then every write is refused (reads work)`);
  return guardrails
    ? () => (stateDir === undefined ? noStateStore(NO_STATE_DIR) : new FileGuardStore(stateDir, guardrails.auditLog ?? join(stateDir, 'audit.jsonl')))
    : undefined;
}

/**
 * One SDK server per connection; the opening message picks the era (2026-07-28 or 2025). Over-long
 * lines are dropped before the SDK's reader, which would otherwise close the connection on one.
 */
function serveOverStdio(engage: EngageServer, log: Logger): StdioServerHandle {
  const input = process.stdin.pipe(new LineLimit(MAX_LINE_BYTES, (bytes) => log.warn(`a message of more than ${bytes} bytes was dropped unread`)));
  return serveStdio((context) => engage.createMcpServer(context), {
    transport: new StdioServerTransport(input, process.stdout),
    onerror: (error) => log.warn(`protocol: ${error.message}`),
  });
}

/** Stops when stdin ends or closes, stdout breaks, or a signal comes: once, after the writes in flight (a second signal: at once). */
function stopWhenTheHostGoes(engage: EngageServer, connection: StdioServerHandle, telemetry: Telemetry | undefined, log: Logger): void {
  let closing = false;
  const shutdown = (why: string, signal = false) => {
    // A second signal while writes are waited for: the person asked twice to stop now.
    if (closing && signal) process.exit(0);
    if (closing) return;
    closing = true;
    log.info(`shutting down: ${why}`);
    // Stdin may stay open: a write asked for now could be cut off by the exit, so none is taken.
    engage.refuseNewWrites();
    void exitAfterWrites(engage, connection, telemetry, log);
  };
  process.stdin.on('end', () => shutdown('stdin closed'));
  process.stdin.on('close', () => shutdown('stdin closed'));
  process.stdout.on('error', () => shutdown('stdout closed'));
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal, true));
}

/**
 * A write at the API is waited for (up to WRITES_WAIT_MS), so its outcome is noted; whatever else
 * is in flight (a read) must not keep the process alive. One still at the API then is cut off (the
 * pool closed): it fails as of unknown outcome, and that is noted (journal, shared mark, audit
 * line) before the exit, which otherwise came first and left the audit record without it.
 */
async function exitAfterWrites(engage: EngageServer, connection: StdioServerHandle, telemetry: Telemetry | undefined, log: Logger): Promise<void> {
  const settled = await engage.writesSettled(WRITES_WAIT_MS);
  if (!settled)
    log.error(
      `a write is still at the API ${WRITES_WAIT_MS / 1000} s after the stop began: it is cut off now, and noted as of unknown outcome (it may have been carried out)`,
    );
  setTimeout(() => process.exit(0), settled ? 500 : CUT_NOTED_MS + 500).unref();
  await engage.close().catch(() => undefined);
  if (!settled) await engage.writesSettled(CUT_NOTED_MS);
  await Promise.allSettled([connection.close(), telemetry?.shutdown()]);
  process.exit(0);
}

/** The log's "ready" line with the tools offered, after a warning where the settings leave none. */
function announceReady(result: ConfigResult, engage: EngageServer, operationIds: readonly string[], log: Logger): void {
  // One allow list may serve all seven servers, so this is no configuration error; but a host shows the server empty.
  if (result.ok && engage.tools.length === 0) {
    log.warn(
      `no tools to offer: ENGAGE_OPERATIONS_ALLOW and ENGAGE_OPERATIONS_DENY leave none of this server's operations (${operationIds.join(', ')}), so a host lists it with none. Name some of them in ENGAGE_OPERATIONS_ALLOW, or remove this server from the host.`,
    );
  }
  log.info(`ready: ${engage.tools.map(({ info }) => info.name).join(', ')}`);
}

const NO_STATE_DIR =
  "no home folder could be found for the guardrails' state directory (HOME is unset or not an absolute path, and this user has no passwd entry with an absolute home), and ENGAGE_STATE_DIR is not set: set ENGAGE_STATE_DIR to an absolute folder for the send counters, idempotency keys and audit record";

/** Where there is no state directory: every write is refused before anything is sent, saying what to set; reads never touch the store. */
function noStateStore(why: string): GuardStore {
  const refuse = () => Promise.reject(new GuardStateError(why));
  return {
    ready: refuse,
    take: refuse,
    giveBack: refuse,
    count: refuse,
    lookup: refuse,
    reserve: refuse,
    settle: refuse,
    appendAudit: refuse,
    auditSecret: refuse,
  };
}
