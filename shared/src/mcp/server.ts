// The server factory: one MCP server per domain, its tools derived from the catalog, served by the
// official SDK (both protocol eras). This is wiring: which tools are offered, whose key a call runs
// with, and the SDK server; the call itself is the call room's (call/tool-call.ts). Listing tools
// needs only the domain's manifest; the catalog (zod schemas, previews) loads on the first call.
import { randomBytes } from 'node:crypto';
import { McpServer, type AuthInfo, type ServerContext } from '@modelcontextprotocol/server';
import { WritesInFlight } from '../call/in-flight.js';
import { KeyGuesses } from '../call/key-guesses.js';
import { Confirmations, MemorySpentStore, keyFingerprint, needsConfirmation, type SpentStore } from '../call/confirmations.js';
import type { CallDeps, Caller, Guard } from '../call/context.js';
import { MemoryGuardStore, type GuardStore } from '../call/guard-store.js';
import { WriteJournal } from '../call/journal.js';
import { notGrantedHere } from '../call/outcomes.js';
import { isOperationEnabled, type Config, type ConfigResult } from '../model/config.js';
import type { DomainManifest, OperationInfo, ToolInfo } from '../model/manifest.js';
import { withCallableReferences } from '../model/references.js';
import type { Domain } from '../model/types.js';
import { createLogger, type Logger } from '../safe/log.js';
import { keyRedactor } from '../safe/redact.js';
import { scrubber } from '../safe/render.js';
import { ApiClient } from '../upstream/api-client.js';
import type { PaceKeeper, UpstreamSlots } from '../upstream/pacing.js';
import { registerViews, viewOf, type ViewInfo } from './apps.js';
import type { ProtocolEra } from './ask.js';
import { jsonSchemaValidator, registerTools, type OfferedTool, type Registration } from './register.js';
import type { Telemetry } from './telemetry.js';
import { describeTool, serverInstructions, toolArguments } from './tools.js';

export type { ProtocolEra };
export const SERVER_VERSION = '0.1.0';

export interface ServerOptions {
  log?: Logger;
  /** The keys locked for a call whose arguments held a part of them; remote mode shares one among its domains. */
  keyGuesses?: KeyGuesses;
  /** Where spent confirmation tokens and requestStates are remembered; in-process by default. */
  spent?: SpentStore;
  /** The HMAC secret for tokens and requestStates; random per process by default (one process honours its own). */
  secret?: Uint8Array;
  /**
   * Remote mode: no key is configured; each call uses the key its HTTP request brought (the SDK's
   * authInfo.token), for that call only, with that key's pace and upstream slots. Confirmations are bound to it.
   */
  remote?: {
    pace?: (keyFingerprint: string) => PaceKeeper;
    slots?: (keyFingerprint: string) => UpstreamSlots;
    /** The log for a request's calls, from its authInfo (remote mode's lines carry the request's id). */
    logOf?: (authInfo: AuthInfo) => Logger;
    /** The API scope of any operation this service serves, another domain's too: what an OAuth grant needs to call what an answer names. */
    scopeOf?: (operationId: string) => string | undefined;
    /** Every operation of every domain the service serves, with its tool: on /mcp, where they share one server, another domain's operation is named as this server's. */
    served?: readonly ServedOperation[];
  };
  /** The API client to use (remote mode shares one keep-alive pool across domains); one of its own by default. */
  client?: ApiClient;
  /** Told after every tool call (remote mode's metrics): never the key, the params or the answer. */
  onCall?: (call: { domain: string; tool: string; ok: boolean; ms: number }) => void;
  /**
   * Where the guardrails keep counters, idempotency records and the audit record: the stdio entry
   * passes the file store of the user's state directory; in this process only by default. Made on
   * the first write, so reads never touch it.
   */
  guardStore?: () => GuardStore;
  /** The clock of the guardrails (quiet hours, the day a cap counts): a seam for tests. */
  now?: () => number;
  /** OpenTelemetry, when it is on (startTelemetry in telemetry.ts): a span per tool call. */
  telemetry?: Telemetry;
}

/**
 * Who an SDK server is built for: the era the SDK's serving entry chose, and in remote mode the
 * request's authInfo (an OAuth grant's scopes narrow the tools it lists).
 */
export interface ServedTo {
  era: ProtocolEra;
  authInfo?: AuthInfo;
  /** Served on one server with every other domain (remote mode's /mcp): another domain's operation is this server's too. */
  together?: boolean;
}

/** An operation of the service (remote mode), as a tool given another domain's operationId is told of it. */
export interface ServedOperation {
  id: string;
  scope: string;
  tool: string;
  write: boolean;
}

export interface EngageServer {
  /**
   * A fresh SDK server for one connection (stdio) or one request (HTTP), for the era the SDK's
   * serving entry chose; every instance shares the API client and confirmations.
   */
  createMcpServer(context?: ServedTo): McpServer;
  /** Registers this domain's tools on an SDK server built elsewhere (remote mode's all-tools endpoint); returns the views they use, to register once. */
  registerTools(mcp: McpServer, servedTo: ServedTo): Array<ViewInfo | undefined>;
  /** The tools offered, after read-only mode and the allow and deny lists. */
  tools: Array<{ info: ToolInfo; operations: OperationInfo[] }>;
  /** The server's instructions for whom it serves (an OAuth grant's say what it leaves out); undefined when it lists them no tool. */
  instructionsFor(authInfo?: AuthInfo): string | undefined;
  /** Resolves true when no write (action call) is in flight, or false after `timeoutMs`: a stopping server waits for their outcomes. */
  writesSettled(timeoutMs: number): Promise<boolean>;
  /** From now on an action call is answered that the server is stopping, and nothing is sent. */
  refuseNewWrites(): void;
  close(): Promise<void>;
}

export function createServer(
  manifest: DomainManifest,
  loadCatalog: () => Promise<Domain>,
  configResult: ConfigResult,
  options: ServerOptions = {},
): EngageServer {
  const config = configResult.ok ? configResult.config : undefined;
  const log =
    options.log ?? createLogger(`engage-mcp-${manifest.name}`, configResult.ok ? configResult.config.logLevel : configResult.logLevel, secretsOf(configResult));
  const client = config ? (options.client ?? new ApiClient(config, log)) : undefined;
  const gated = (op: { id: string; risk: OperationInfo['risk'] }) => (config ? needsConfirmation(config, op) : op.risk !== 'safe');
  const offered = offeredTools(manifest, config);
  const writes = new WritesInFlight();
  const deps: CallDeps = {
    domain: manifest.name,
    configResult,
    client,
    confirmations: new Confirmations({ secret: options.secret ?? randomBytes(32), store: options.spent ?? new MemorySpentStore() }),
    log,
    catalog: catalogOnFirstCall(manifest, loadCatalog, offered, config, options),
    gated,
    guard: guardOf(manifest.name, config, options),
    stopping: () => writes.refusing,
  };
  const registration = registrationOf(deps, configResult, config, options, writes);
  const offerOf = offers(manifest, offered, gated, config, options.remote?.served ?? []);
  return servedFrom(manifest, offered, offerOf, registration, options, client);
}

/** The domain's catalog, loaded on the first call and kept, as this server offers it: its references (verifyWith, findIdsWith) only to what the model can call. */
function catalogOnFirstCall(
  manifest: DomainManifest,
  loadCatalog: () => Promise<Domain>,
  offered: ReturnType<typeof offeredTools>,
  config: Config | undefined,
  options: ServerOptions,
): () => Promise<Domain> {
  let catalog: Promise<Domain> | undefined;
  return () =>
    (catalog ??= loadCatalog().then((domain) => withCallableReferences(domain, callableHere(manifest, offered, config, options), scopesOf(manifest, options))));
}

/** What every SDK server of this domain registers its tools with: the call's dependencies, whose key a call runs with, the writes in flight. */
function registrationOf(deps: CallDeps, configResult: ConfigResult, config: Config | undefined, options: ServerOptions, writes: WritesInFlight): Registration {
  const redact = keyRedactor(secretsOf(configResult));
  return {
    deps,
    callerOf: callers(config, options, redact),
    redact,
    writes,
    ...(options.onCall ? { onCall: options.onCall } : {}),
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  };
}

/** The EngageServer over the domain's offers: every SDK server made for a connection or request shares the registration and the API client. */
function servedFrom(
  manifest: DomainManifest,
  offered: ReturnType<typeof offeredTools>,
  offerOf: ReturnType<typeof offers>,
  registration: Registration,
  options: ServerOptions,
  client: ApiClient | undefined,
): EngageServer {
  function createMcpServer({ era, authInfo }: ServedTo = { era: 'legacy' }): McpServer {
    const { tools, instructions } = offerOf(options.remote ? authInfo : undefined);
    const mcp = new McpServer(
      { name: `engage-mcp-${manifest.name}`, title: `engage-mcp: ${manifest.title}`, version: SERVER_VERSION },
      { capabilities: { tools: { listChanged: false } }, instructions, jsonSchemaValidator },
    );
    registerViews(mcp, registerTools(mcp, era, tools, registration));
    return mcp;
  }

  return {
    createMcpServer,
    registerTools: (mcp, { era, authInfo, together }) =>
      registerTools(mcp, era, offerOf(options.remote ? authInfo : undefined, together === true).tools, registration),
    tools: offered.map(({ info, operations }) => ({ info, operations })),
    instructionsFor(authInfo) {
      const offer = offerOf(options.remote ? authInfo : undefined);
      return offer.tools.length > 0 ? offer.instructions : undefined;
    },
    writesSettled: (timeoutMs) => registration.writes.settled(timeoutMs),
    refuseNewWrites: () => {
      registration.writes.refuseNew();
      // A write that has not reached the API yet (a 429's wait) is not sent now either.
      client?.stopWrites();
    },
    async close() {
      await client?.close();
    },
  };
}

/** The key to redact: the configured one, or, where the configuration failed, ENGAGE_API_KEY as it was set. */
export function secretsOf(configResult: ConfigResult): string[] {
  return configResult.ok ? [configResult.config.apiKey] : configResult.secrets;
}

function guardOf(domain: string, config: Config | undefined, options: ServerOptions): Guard {
  const now = options.now ?? Date.now;
  let store: GuardStore | undefined;
  return {
    server: `engage-mcp-${domain}`,
    settings: config?.guardrails,
    now,
    store: () => (store ??= options.guardStore?.() ?? new MemoryGuardStore(now)),
  };
}

/**
 * Which operations each tool offers (read-only mode, the allow and deny lists), and for each tool
 * why the domain's other operations are not its own, for a clear refusal.
 */
function offeredTools(manifest: DomainManifest, config: Config | undefined) {
  const disabled = new Map<string, string>();
  const offered: Array<{ info: ToolInfo; operations: OperationInfo[] }> = [];
  for (const info of manifest.tools) {
    const operations = info.operations.filter((op) => {
      if (!config) return true; // unconfigured: every call answers with the configuration problem
      const excluded = excludedBy(config, op.id, op.risk !== 'safe');
      if (excluded) disabled.set(op.id, excluded);
      return excluded === undefined;
    });
    if (operations.length > 0) offered.push({ info, operations });
  }
  for (const { info, operations } of offered) for (const op of operations) disabled.set(op.id, `it belongs to the tool ${info.name}`);
  return offered.map(({ info, operations }) => ({
    info,
    operations,
    disabled: new Map([...disabled].filter(([id]) => !operations.some((op) => op.id === id))),
  }));
}

/** Why the configuration leaves an operation out (read-only mode, the allow and deny lists), or undefined when it offers it. */
function excludedBy(config: Config, operationId: string, write: boolean): string | undefined {
  if (isOperationEnabled(config, operationId, write)) return undefined;
  const setting = config.readOnly && write ? 'ENGAGE_READ_ONLY is true' : 'it is excluded by ENGAGE_OPERATIONS_ALLOW or ENGAGE_OPERATIONS_DENY';
  // Whose setting it is, so the model tells the user rather than working around it.
  return `${setting}, the server's own settings, which only the user (or whoever set the server up) changes: tell the user`;
}

interface Offer {
  tools: OfferedTool[];
  instructions: string;
}

/**
 * The tools and instructions an SDK server is built with: every offered operation, or for an OAuth
 * grant (remote mode) only those whose scope it holds, so the model is never shown a call it would
 * be refused and a read-only grant gets no action tool; the instructions say what is left out.
 * `together` (remote mode's /mcp, where every domain shares one server): a tool given another
 * domain's operationId is told it is this server's (the tool it belongs to, the scope the grant
 * lacks, or the setting that leaves it out), never that it is on another server. Built once per
 * set of scopes a grant holds (a handful), as remote mode builds a server per request.
 */
function offers(
  manifest: DomainManifest,
  offered: ReturnType<typeof offeredTools>,
  gated: (op: OperationInfo) => boolean,
  config: Config | undefined,
  served: readonly ServedOperation[],
) {
  const offerFor = (tools: typeof offered, unlisted: string, elsewhere: ReadonlyMap<string, string> | undefined): Offer => ({
    tools: tools.map(({ info, operations, disabled }) => ({
      info,
      operations,
      description: describeTool(info, operations, gated),
      args: toolArguments(info, operations, elsewhere ? new Map([...elsewhere, ...disabled]) : disabled, {
        quietHours: config?.guardrails.quietHours !== undefined,
      }),
      view: viewOf(info, operations, gated),
    })),
    instructions: `${serverInstructions(manifest, tools, gated)}${unlisted}`,
  });
  const scopesHere = new Set(offered.flatMap(({ operations }) => operations.map((op) => op.scope)));
  const own = new Set(manifest.tools.flatMap((tool) => tool.operations.map((op) => op.id)));
  const others = served.filter((op) => !own.has(op.id));
  const scopesServed = new Set(served.map((op) => op.scope));
  /** Another domain's operations, and why this tool does not run each: for a grant of `granted` (every scope without one). */
  const elsewhereFor = (granted: ReadonlySet<string> | undefined) =>
    new Map(
      others.map((op) => [
        op.id,
        (config && excludedBy(config, op.id, op.write)) ?? (granted && !granted.has(op.scope) ? notGrantedHere(op.scope) : `it belongs to the tool ${op.tool}`),
      ]),
    );
  const built = new Map<string, Offer>();
  return (authInfo: AuthInfo | undefined, together = false): Offer => {
    const grant = authInfo && grantOf(authInfo.extra);
    const granted = grant && new Set(grant.scopes.filter((scope) => scopesHere.has(scope)));
    const narrowed = granted !== undefined && granted.size < scopesHere.size ? [...granted].sort() : undefined;
    const grantedServed = grant && [...new Set(grant.scopes.filter((scope) => scopesServed.has(scope)))].sort();
    const withOthers = together && others.length > 0;
    const key = JSON.stringify([narrowed ?? '*', withOthers ? (grantedServed ?? '*') : '-']);
    let offer = built.get(key);
    if (!offer) {
      const missing = narrowed ? [...scopesHere].filter((scope) => !granted?.has(scope)) : [];
      const unlisted =
        missing.length > 0
          ? ` Not listed: the operations that need the API scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, which this connection's sign-in did not grant (the user can reconnect this server and tick ${missing.length > 1 ? 'them' : 'it'}).`
          : '';
      const elsewhere = withOthers ? elsewhereFor(grantedServed && new Set(grantedServed)) : undefined;
      // A grant's scope sets are few: past MAX_OFFERS distinct ones, they are built anew rather than kept.
      if (built.size >= MAX_OFFERS) built.clear();
      offer = offerFor(granted && narrowed ? narrowedToGrant(offered, granted) : offered, unlisted, elsewhere);
      built.set(key, offer);
    }
    return offer;
  };
}

/** How many offers (sets of granted scopes, per endpoint kind) a domain keeps built. */
const MAX_OFFERS = 256;

/** The offered tools with only the operations a grant's scopes allow; each one left out says which scope it needs. */
function narrowedToGrant(offered: ReturnType<typeof offeredTools>, granted: ReadonlySet<string>): ReturnType<typeof offeredTools> {
  const left = offered.flatMap(({ operations }) => operations.filter((op) => !granted.has(op.scope)));
  const reasons = left.map((op) => [op.id, notGrantedHere(op.scope)] as const);
  return offered
    .map(({ info, operations, disabled }) => ({
      info,
      operations: operations.filter((op) => granted.has(op.scope)),
      disabled: new Map([...disabled, ...reasons]),
    }))
    .filter(({ operations }) => operations.length > 0);
}

/**
 * Whether the model can call an operation another one names (verifyWith, findIdsWith): this
 * domain's own, when this server offers it; another domain's is on another server, whose
 * settings a stdio server does not know (kept), while remote mode serves every domain with
 * these same settings (kept only where they offer it).
 */
function callableHere(manifest: DomainManifest, offered: ReturnType<typeof offeredTools>, config: Config | undefined, options: ServerOptions) {
  const own = new Set(manifest.tools.flatMap((tool) => tool.operations.map((op) => op.id)));
  const here = new Set(offered.flatMap(({ operations }) => operations.map((op) => op.id)));
  return (operationId: string) =>
    own.has(operationId) ? here.has(operationId) : !(options.remote && config && !isOperationEnabled(config, operationId, false));
}

/** The API scope an operation needs: this domain's from its manifest, another's from remote mode (which serves them all). */
function scopesOf(manifest: DomainManifest, options: ServerOptions): (operationId: string) => string | undefined {
  const own = new Map(manifest.tools.flatMap((tool) => tool.operations.map((op) => [op.id, op.scope] as const)));
  return (operationId) => own.get(operationId) ?? options.remote?.scopeOf?.(operationId);
}

/** Whose key a call runs with: the configured one, or in remote mode the one its request brought. */
function callers(config: Config | undefined, options: ServerOptions, redact: ReturnType<typeof keyRedactor>): (ctx: ServerContext) => Caller | undefined {
  // One journal for every key: it keeps each key's writes apart, and refused attempts (made-up keys) never push out sent ones.
  const journal = new WriteJournal();
  const guesses = options.keyGuesses ?? new KeyGuesses(undefined, options.log);
  if (!options.remote) {
    const own: Caller = { keyId: config ? keyFingerprint(config.apiKey) : '', redact, scrub: scrubber(redact), journal, guesses };
    return () => own;
  }
  const callerWith = remoteCallers(journal, guesses, options.remote);
  const logOf = options.remote.logOf;
  return (ctx) => {
    const authInfo = ctx.http?.authInfo;
    if (!authInfo?.token) return undefined;
    const caller = { ...callerWith(authInfo.token), ...(logOf ? { log: logOf(authInfo) } : {}) };
    // An OAuth grant: confirmations and requestStates bind to the grant, and its scopes are the allow-list. Caps,
    // idempotency keys, the journal, the pace and the upstream slots stay the tenant key's, whichever grant it came through.
    const grant = grantOf(authInfo.extra);
    if (!grant) return caller;
    const domain = authInfo.resource ? /\/mcp\/([a-z]+)\/?$/.exec(authInfo.resource.pathname)?.[1] : undefined;
    return {
      ...caller,
      confirmationsBoundTo: `${caller.keyId}:grant:${grant.id}`,
      grantedScopes: new Set(grant.scopes),
      ...(domain ? { grantDomain: domain } : {}),
    };
  };
}

/** How many keys' redactors remote mode keeps ready; a key not seen among the latest this many has its redactor built again. */
const CACHED_KEYS = 256;

/**
 * Remote mode's caller for a request's key. Each key's fingerprint, redactor (and the scrub built on
 * it) are made once and kept for the CACHED_KEYS keys used most recently: building a redactor per
 * request cost more than the rest of a small call. Kept by the key itself, whose forms the redactor
 * holds anyway, so a call hashes nothing.
 */
export function remoteCallers(
  journal: WriteJournal,
  guesses: KeyGuesses,
  { pace, slots }: NonNullable<ServerOptions['remote']> = {},
  limit = CACHED_KEYS,
): (apiKey: string) => Caller {
  const byKey = new Map<string, Pick<Caller, 'keyId' | 'redact' | 'scrub'>>();
  return (apiKey) => {
    let own = byKey.get(apiKey);
    if (own) byKey.delete(apiKey);
    else {
      const redact = keyRedactor([apiKey]);
      own = { keyId: keyFingerprint(apiKey), redact, scrub: scrubber(redact) };
    }
    byKey.set(apiKey, own); // the most recently used last
    if (byKey.size > limit) byKey.delete(byKey.keys().next().value as string);
    const { keyId } = own;
    const credentials = { apiKey, ...(pace ? { pace: pace(keyId) } : {}), ...(slots ? { slots: slots(keyId) } : {}) };
    return { ...own, journal, guesses, credentials };
  };
}

/** The OAuth grant remote mode puts in authInfo.extra.grant, if well formed. */
function grantOf(extra: Record<string, unknown> | undefined): { id: string; scopes: string[] } | undefined {
  const grant = extra?.grant as { id?: unknown; scopes?: unknown } | undefined;
  if (typeof grant?.id !== 'string' || !Array.isArray(grant.scopes)) return undefined;
  return { id: grant.id, scopes: grant.scopes.filter((scope): scope is string => typeof scope === 'string') };
}
