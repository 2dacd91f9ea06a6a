// The MCP server side of the protocol, for a server that offers tools and nothing else:
// initialize, ping, tools/list, tools/call, cancellation, progress, and requests to the client
// (elicitation). It replaces the SDK's Server at run time because the SDK builds hundreds of zod
// schemas at start-up, which doubled a server's start time and memory (see README, benchmarks).
// The SDK's types are still used at compile time, and every test talks to this through the
// SDK's own Client, so a divergence from the protocol fails the suite.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, ClientCapabilities, Implementation, JSONRPCMessage, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from './log.js';

/** The versions this server speaks, newest first (the SDK 1.32 list; a unit test keeps them equal). */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];

type Id = string | number;
type Message = Record<string, unknown>;

/** The SDK's transport interface: ours for stdio, and the SDK's in-memory one in tests. */
export type MessageTransport = Transport;

export interface CallContext {
  signal: AbortSignal;
  progressToken?: string | number;
  /** Sends a notification to the client; failures are logged, never thrown. */
  notify(method: string, params: Message): void;
}

export interface ToolHandlers {
  listTools(): Tool[];
  callTool(name: string, args: Record<string, unknown>, context: CallContext): Promise<CallToolResult>;
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

const isObject = (value: unknown): value is Message => typeof value === 'object' && value !== null && !Array.isArray(value);
const isId = (value: unknown): value is Id => typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

export class McpSession {
  private transport: MessageTransport | undefined;
  private clientCapabilities: ClientCapabilities | undefined;
  private readonly inFlight = new Map<Id, AbortController>();
  private readonly pending = new Map<Id, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  private nextId = 0;

  constructor(
    private readonly info: Implementation,
    private readonly handlers: ToolHandlers,
    private readonly log: Logger,
  ) {}

  async connect(transport: MessageTransport): Promise<void> {
    this.transport = transport;
    transport.onmessage = (message: unknown) => this.receive(message);
    transport.onerror = (error) => {
      if (error instanceof SyntaxError) this.send({ jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: 'Parse error: not JSON' } });
      else this.log.warn(`transport: ${error.message}`);
    };
    transport.onclose = () => this.closed();
    await transport.start();
  }

  getClientCapabilities(): ClientCapabilities | undefined {
    return this.clientCapabilities;
  }

  /** Sends a request to the client and waits for its result. */
  request(method: string, params: Message, options: { signal?: AbortSignal; timeoutMs: number }): Promise<unknown> {
    const id = `s${++this.nextId}`;
    return new Promise((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
      };
      const fail = (error: Error) => {
        finish();
        this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: error.message } });
        reject(error);
      };
      const onAbort = () => fail(new Error('cancelled'));
      const timer = setTimeout(() => fail(new Error(`no answer to ${method} within ${options.timeoutMs} ms`)), options.timeoutMs);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        resolve: (result) => {
          finish();
          resolve(result);
        },
        reject: (error) => {
          finish();
          reject(error);
        },
      });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  async close(): Promise<void> {
    await this.transport?.close().catch(() => undefined);
    this.closed();
  }

  private closed(): void {
    for (const controller of this.inFlight.values()) controller.abort();
    for (const { reject } of this.pending.values()) reject(new Error('connection closed'));
    this.pending.clear();
    this.transport = undefined;
  }

  private send(message: Message): void {
    this.transport?.send(message as unknown as JSONRPCMessage).catch((error: unknown) => this.log.warn(`could not send: ${error instanceof Error ? error.message : String(error)}`));
  }

  private receive(message: unknown): void {
    if (!isObject(message) || message.jsonrpc !== '2.0') {
      const id = isObject(message) && isId(message.id) ? message.id : null;
      this.send({ jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message: 'Invalid request: not a JSON-RPC 2.0 message' } });
      return;
    }
    if (typeof message.method === 'string') {
      if (isId(message.id)) void this.handleRequest(message.id, message.method, message.params);
      else this.handleNotification(message.method, message.params);
      return;
    }
    if (isId(message.id)) {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      if (isObject(message.error)) waiting.reject(new Error(`client error ${String(message.error.code)}: ${String(message.error.message)}`));
      else waiting.resolve(message.result);
      return;
    }
    this.send({ jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: 'Invalid request: no method and no id' } });
  }

  private handleNotification(method: string, params: unknown): void {
    if (method === 'notifications/cancelled' && isObject(params) && isId(params.requestId)) {
      this.inFlight.get(params.requestId)?.abort();
    }
    // notifications/initialized and anything else need no answer.
  }

  private async handleRequest(id: Id, method: string, params: unknown): Promise<void> {
    const controller = new AbortController();
    this.inFlight.set(id, controller);
    try {
      const result = await this.dispatch(method, params, controller.signal);
      // A cancelled request gets no answer (the client has stopped waiting for it).
      if (!controller.signal.aborted) this.send({ jsonrpc: '2.0', id, result });
    } catch (error) {
      const code = error instanceof RpcError ? error.code : INTERNAL_ERROR;
      if (!(error instanceof RpcError)) this.log.error(`${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!controller.signal.aborted) this.send({ jsonrpc: '2.0', id, error: { code, message: error instanceof RpcError ? error.message : 'Internal error' } });
    } finally {
      this.inFlight.delete(id);
    }
  }

  private async dispatch(method: string, raw: unknown, signal: AbortSignal): Promise<unknown> {
    const params: Message = isObject(raw) ? raw : {};
    switch (method) {
      case 'initialize': {
        const requested = params.protocolVersion;
        this.clientCapabilities = normalizeCapabilities(params.capabilities);
        const protocolVersion = typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : SUPPORTED_PROTOCOL_VERSIONS[0];
        return { protocolVersion, capabilities: { tools: { listChanged: false } }, serverInfo: this.info };
      }
      case 'ping':
        return {};
      case 'tools/list':
        return { tools: this.handlers.listTools() };
      case 'tools/call': {
        if (raw !== undefined && !isObject(raw)) throw new RpcError(INVALID_PARAMS, 'Invalid params: tools/call takes an object');
        if (typeof params.name !== 'string') throw new RpcError(INVALID_PARAMS, 'Invalid params: tools/call needs a tool name');
        const args = params.arguments;
        if (args !== undefined && !isObject(args)) throw new RpcError(INVALID_PARAMS, 'Invalid params: arguments must be an object');
        const meta = isObject(params._meta) ? params._meta : {};
        const progressToken = typeof meta.progressToken === 'string' || typeof meta.progressToken === 'number' ? meta.progressToken : undefined;
        return this.handlers.callTool(params.name, args ?? {}, {
          signal,
          ...(progressToken !== undefined ? { progressToken } : {}),
          notify: (notification, notificationParams) => this.send({ jsonrpc: '2.0', method: notification, params: notificationParams }),
        });
      }
      default:
        throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method}`);
    }
  }
}

/** An empty elicitation capability means form elicitation (as the SDK reads it). */
function normalizeCapabilities(capabilities: unknown): ClientCapabilities {
  if (!isObject(capabilities)) return {};
  const elicitation = capabilities.elicitation;
  if (isObject(elicitation) && Object.keys(elicitation).length === 0) return { ...capabilities, elicitation: { form: {} } } as ClientCapabilities;
  return capabilities as ClientCapabilities;
}
