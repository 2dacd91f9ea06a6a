// Shared test harness: the catalogs, in-process client/server pairs against a sandbox (in both
// protocol eras, with the v1 client most 2025 hosts ship and the v2 client), and small readers
// for tool results.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createLogger, createServer, loadConfig, manifestOf, type Domain, type ServerOptions } from '@engage-mcp/shared';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../scripts/catalogs.js';

export const DOMAINS: Record<string, Domain> = Object.fromEntries(CATALOGS.map((domain) => [domain.name, domain]));
export const ALL_OPERATIONS = Object.values(DOMAINS).flatMap((domain) => domain.operations);

export function domainOf(operationId: string): Domain {
  return DOMAINS[operationId.split('.')[0] as string] as Domain;
}

export function toolOf(operationId: string): string {
  const domain = domainOf(operationId);
  return (domain.tools.find((tool) => tool.operations.some((op) => op.id === operationId)) as { name: string }).name;
}

/**
 * The clients a server must serve: `v1` is the 2025 SDK client most hosts shipped; the v2 client
 * in `legacy` mode speaks 2025 too, `auto` probes with server/discover, `modern` is pinned to
 * 2026-07-28 (no initialize; elicitation comes as input_required rounds).
 */
export const CLIENT_KINDS = ['v1', 'v2-legacy', 'v2-auto', 'v2-modern'] as const;
export type ClientKind = (typeof CLIENT_KINDS)[number];
export const MODERN_REVISION = '2026-07-28';

export interface CallOptions {
  onprogress?: (progress: { progress: number; message?: string }) => void;
  signal?: AbortSignal;
  timeout?: number;
}

/** The calls every test makes, whichever client is behind them (v1's call shape: request, result schema, options). */
export interface TestClient {
  kind: ClientKind;
  instructions(): string | undefined;
  ping(): Promise<unknown>;
  listTools(): Promise<{ tools: Array<Record<string, any>> }>;
  callTool(request: { name: string; arguments?: Record<string, unknown> }, resultSchema?: undefined, options?: CallOptions): Promise<CallToolResult>;
  listResources(): Promise<{ resources: Array<Record<string, any>> }>;
  readResource(request: { uri: string }): Promise<{ contents: Array<Record<string, any>> }>;
  getServerCapabilities(): Record<string, unknown> | undefined;
  close(): Promise<void>;
  connect(transport: unknown): Promise<void>;
}

export interface ClientOptions {
  kind?: ClientKind;
  /** Declares elicitation and answers every request with this. */
  elicit?: (message: string) => ElicitResult | Promise<ElicitResult>;
  /** v1 only: declares elicitation and answers every request with exactly this result, unchecked (a host's malformed answer). */
  elicitRaw?: () => unknown;
  /** Declares elicitation but handles none: the client answers elicitation/create with method-not-found (a host that cannot ask after all). */
  elicitUnsupported?: boolean;
  /** The name the client introduces itself by (clientInfo.name); test-<kind> if unset. */
  clientName?: string;
}

/** A client of the given kind, with elicitation when asked for. */
export function makeClient({ kind = 'v1', elicit, elicitRaw, elicitUnsupported, clientName }: ClientOptions): TestClient {
  const capabilities = elicit || elicitRaw || elicitUnsupported ? { elicitation: {} } : {};
  if (kind === 'v1') {
    const client = new Client({ name: clientName ?? 'test-v1', version: '0' }, { capabilities });
    if (elicit) client.setRequestHandler(ElicitRequestSchema, async (request) => elicit(request.params.message));
    // The base class's registration: the v1 Client's own checks the result before sending it.
    if (elicitRaw) Protocol.prototype.setRequestHandler.call(client, ElicitRequestSchema, async () => elicitRaw() as never);
    return {
      kind,
      instructions: () => client.getInstructions(),
      ping: () => client.ping(),
      listTools: () => client.listTools() as never,
      callTool: (request, _schema, options) => client.callTool(request, undefined, options) as Promise<CallToolResult>,
      listResources: () => client.listResources() as never,
      readResource: (request) => client.readResource(request) as never,
      getServerCapabilities: () => client.getServerCapabilities(),
      close: () => client.close(),
      connect: (transport) => client.connect(transport as never),
    };
  }
  const mode = kind === 'v2-legacy' ? 'legacy' : kind === 'v2-auto' ? 'auto' : { pin: MODERN_REVISION };
  const client = new ModernClient({ name: clientName ?? `test-${kind}`, version: '0' }, { capabilities, versionNegotiation: { mode } });
  if (elicit) client.setRequestHandler('elicitation/create', async (request) => (await elicit((request.params as { message: string }).message)) as never);
  return {
    kind,
    instructions: () => client.getInstructions(),
    ping: () => client.ping(),
    listTools: () => client.listTools() as never,
    callTool: (request, _schema, options) => client.callTool(request, options as never) as Promise<CallToolResult>,
    listResources: () => client.listResources() as never,
    readResource: (request) => client.readResource(request) as never,
    getServerCapabilities: () => client.getServerCapabilities() as Record<string, unknown> | undefined,
    close: () => client.close(),
    connect: (transport) => client.connect(transport as never),
  };
}

export interface InProcess {
  client: TestClient;
  logs: string[];
  call(operationId: string, params?: Record<string, unknown>, extra?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

export interface InProcessOptions extends ClientOptions {
  env?: Record<string, string | undefined>;
  server?: ServerOptions;
}

/** A domain server in this process, served by the SDK's own era-selecting entry over an in-memory pipe, against the sandbox. */
export async function inProcess(domain: Domain, sandbox: Pick<Sandbox, 'baseUrl' | 'keys'>, options: InProcessOptions = {}): Promise<InProcess> {
  const env = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ...options.env };
  const config = loadConfig(
    env,
    domain.name,
    domain.operations.map((op) => op.id),
  );
  const logs: string[] = [];
  const log = createLogger(domain.name, 'debug', config.ok ? [config.config.apiKey] : [], (line) => logs.push(line) > 0);
  const engage = createServer(manifestOf(domain), async () => domain, config, { log, ...options.server });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const served = serveStdio((context) => engage.createMcpServer(context), { transport: serverTransport });
  const client = makeClient(options);
  await client.connect(clientTransport);
  return {
    client,
    logs,
    call: (operationId, params, extra = {}) =>
      client.callTool({ name: toolOf(operationId), arguments: { operationId, ...(params ? { params } : {}), ...extra } }),
    close: async () => {
      await client.close();
      await served.close();
      await engage.close();
    },
  };
}

export function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

export function structuredOf(result: CallToolResult): Record<string, unknown> {
  return (result.structuredContent ?? {}) as Record<string, unknown>;
}

export function countCarriedOut(sandbox: Sandbox, operationId: string): number {
  return sandbox.carriedOut().filter((entry) => entry.operationId === operationId).length;
}

/**
 * Resolves once `check` holds, polled every `gapMs`; rejects naming `what` after `ms`. For a test
 * that must act after something it can observe (a request at the API, a retry in the background),
 * not after a fixed sleep: under load a sleep ends too early. The bound only keeps a hang short.
 */
export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000, gapMs = 20): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still not so after ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
}

/** How many requests for this operation reached the sandbox (answered or still held by an injected fault). */
export function requestsAtApi(sandbox: Pick<Sandbox, 'requests'>, operationId: string): number {
  return sandbox.requests().filter((request) => request.operationId === operationId).length;
}

/**
 * For expect.poll and vi.waitFor, whose own limit (1 s) a loaded CI machine outlasts: a condition
 * that holds returns at once; the limit only decides how long a failure takes to show.
 */
export const WAIT_UNDER_LOAD = { timeout: 15_000, interval: 50 } as const;
