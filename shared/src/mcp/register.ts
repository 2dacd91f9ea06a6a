// Tool registration: every tool of every server goes through registerTool here, so every call
// takes the same path (arguments validated by our parser, the call's stages, metrics) and none
// can bypass it. The handler never throws: every failure is an isError answer.
import {
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  fromJsonSchema,
  type JsonSchemaValidator,
  type jsonSchemaValidator as ValidatorProvider,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/server/validators/cf-worker';
import type { CallDeps, Caller, Reply, ToolArguments } from '../call/context.js';
import { finishAnswer } from '../call/answers.js';
import { failure, noKey, serverStopping } from '../call/outcomes.js';
import type { WritesInFlight } from '../call/in-flight.js';
import { runToolCall } from '../call/tool-call.js';
import type { OperationInfo, ToolInfo } from '../model/manifest.js';
import type { Redact } from '../safe/redact.js';
import { cleanText, oneLine } from '../safe/sanitize.js';
import type { CallContext } from '../upstream/api-client.js';
import { toolViewMeta, type ViewInfo } from './apps.js';
import { askingFor, type ProtocolEra } from './ask.js';
import { callSignalOf } from './call-signal.js';
import type { Telemetry, ToolCallSpan, ToolCallStart } from './telemetry.js';
import { ACTION_OUTPUT_SCHEMA, READ_OUTPUT_SCHEMA, annotations, type ArgumentParser } from './tools.js';

/**
 * Each tool's definition, built once and shared by every SDK server that registers it: remote mode
 * builds one per request, and compiling the schemas' validators each time showed in its profiles.
 * The SDK only reads a definition.
 */
const definitions = new WeakMap<OfferedTool, ReturnType<typeof buildDefinition>>();

function definitionOf(tool: OfferedTool): ReturnType<typeof buildDefinition> {
  let definition = definitions.get(tool);
  if (!definition) {
    definition = buildDefinition(tool);
    definitions.set(tool, definition);
  }
  return definition;
}

function buildDefinition(tool: OfferedTool) {
  return {
    title: tool.info.title,
    description: tool.description,
    inputSchema: fromJsonSchema<ToolArguments>(tool.args.jsonSchema, argumentValidator(tool.args)),
    outputSchema: fromJsonSchema(tool.info.kind === 'read' ? READ_OUTPUT_SCHEMA : ACTION_OUTPUT_SCHEMA, jsonSchemaValidator),
    annotations: annotations(tool.info, tool.operations),
    ...toolViewMeta(tool.view),
  };
}

/** Larger arguments are refused before anything else; no operation needs more. */
const MAX_ARGUMENT_CHARS = 4 * 1024 * 1024;
/**
 * A call within every bound its catalog names can still be over this one (an import of 10,000
 * contacts with long names and emails): the refusal says how to go on, as every failure does.
 */
const ARGUMENTS_TOO_LARGE =
  `the arguments are larger than ${MAX_ARGUMENT_CHARS / 1024 / 1024} MiB; nothing was sent. ` +
  'Send the same work in smaller calls: split a long list in params into several calls, each well under that size.';

/** The SDK's own JSON Schema validator, without ajv: for our output schemas and the confirmation question. */
export const jsonSchemaValidator = new CfWorkerJsonSchemaValidator();

export interface OfferedTool {
  info: ToolInfo;
  operations: OperationInfo[];
  description: string;
  args: ArgumentParser;
  /** The MCP Apps view its results are shown in, by hosts that render them. */
  view?: ViewInfo;
}

/** The context every registration shares: the call's dependencies, whose key a request runs with, and who is told about each call. */
export interface Registration {
  deps: CallDeps;
  /** The caller of a request: the configured key's, or in remote mode the request's (undefined: none came). */
  callerOf(ctx: ServerContext): Caller | undefined;
  /** Redacts an answer given before any caller is known (no key came). */
  redact: Redact;
  onCall?: (call: { domain: string; tool: string; ok: boolean; ms: number }) => void;
  /** Telemetry is on: each call gets a span (telemetry-spans.ts). */
  telemetry?: Telemetry;
  /** The action calls running, which a stopping server waits for. */
  writes: WritesInFlight;
}

export function registerTools(mcp: McpServer, era: ProtocolEra, tools: readonly OfferedTool[], registration: Registration): Array<ViewInfo | undefined> {
  const operations = tools.flatMap((tool) => tool.operations);
  for (const tool of tools) {
    mcp.registerTool(tool.info.name, definitionOf(tool), (args: ToolArguments | RefusedArguments, ctx: ServerContext) => {
      if (tool.info.kind === 'action' && registration.writes.refusing) return serverStopping();
      const caller = registration.callerOf(ctx);
      const span = registration.telemetry && startSpan(registration.telemetry, tool, operations, { era, mcp, ctx }, caller);
      const handled = handle(tool, args, { era, mcp, ctx }, registration, caller, span);
      // A write is counted until its span has ended too, so a stopping server waits for both.
      return tool.info.kind === 'action' ? registration.writes.during(handled) : handled;
    });
  }
  return tools.map((tool) => tool.view);
}

async function handle(
  tool: OfferedTool,
  args: ToolArguments | RefusedArguments,
  exchange: Parameters<typeof askingFor>[0],
  registration: Registration,
  caller: Caller | undefined,
  span?: ToolCallSpan,
): Promise<Reply> {
  const started = performance.now();
  // Remote mode: the call's lines go to its request's log (they carry the request's id).
  const deps = caller?.log ? { ...registration.deps, log: caller.log } : registration.deps;
  let reply: Reply | undefined;
  try {
    const running =
      args instanceof RefusedArguments
        ? Promise.resolve(refusedArguments(tool, args, span))
        : caller
          ? runToolCall(deps, {
              toolName: tool.info.name,
              kind: tool.info.kind,
              args,
              caller,
              request: { ...progressReporter(exchange.ctx), ...(span ? { traceAttempt: span.traceAttempt } : {}), ...(caller.log ? { log: caller.log } : {}) },
              asking: askingFor(exchange, deps.log),
              ...clientOf(exchange),
              ...(span ? { telemetry: span } : {}),
            })
          : Promise.resolve(finishAnswer(noKey(), registration.redact));
    reply = await running;
  } finally {
    span?.end(reply);
  }
  registration.onCall?.({ domain: deps.domain, tool: tool.info.name, ok: !('isError' in reply && reply.isError), ms: performance.now() - started });
  return reply;
}

/**
 * Arguments the tool's parser refused. The validator hands them on rather than failing, so the
 * call still goes through handle (its span, its metrics): the SDK would answer such a call itself,
 * before any handler, and neither would see it.
 */
class RefusedArguments {
  constructor(readonly reason: string) {}
}

/**
 * The answer the SDK gives for arguments its validator refuses, word for word, given by us. Not
 * redacted, as the SDK's was not: the reason quotes only what the caller sent, and redacting it
 * would answer a guess at the key otherwise than any other guess (review8: key guesses).
 */
function refusedArguments(tool: OfferedTool, refused: RefusedArguments, span?: ToolCallSpan): Reply {
  span?.settled({ outcome: 'invalid' });
  return failure(`Input validation error: Invalid arguments for tool ${tool.info.name}: ${refused.reason}`);
}

/** The call's span: its parent is the caller's, from params._meta (traceparent, tracestate). */
function startSpan(
  telemetry: Telemetry,
  tool: OfferedTool,
  operations: OperationInfo[],
  { era, mcp, ctx }: Parameters<typeof askingFor>[0],
  caller: Caller | undefined,
): ToolCallSpan {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const version = era === 'modern' ? envelope?.[PROTOCOL_VERSION_META_KEY] : mcp.server.getNegotiatedProtocolVersion();
  const redact = caller?.redact;
  return telemetry.startToolCall({
    tool: tool.info.name,
    operations,
    requestId: ctx.mcpReq.id,
    meta: ctx.mcpReq._meta as Record<string, unknown> | undefined,
    // The caller's request id and trace context are recorded only without its key in them.
    ...(redact ? { holdsKey: (text: string) => redact(text) !== text } : {}),
    transport: ctx.http ? 'tcp' : 'pipe',
    ...(ctx.http ? { connection: connectionOf(ctx) } : {}),
    ...(typeof version === 'string' ? { protocolVersion: version } : {}),
  });
}

/** A remote call's TCP peer (the service put it in authInfo.extra.peer) and its 2025 session, if any. */
function connectionOf(ctx: ServerContext): NonNullable<ToolCallStart['connection']> {
  const peer = ctx.http?.authInfo?.extra?.peer as { address?: unknown; port?: unknown } | undefined;
  return {
    ...(typeof peer?.address === 'string' ? { clientAddress: peer.address } : {}),
    ...(typeof peer?.port === 'number' ? { clientPort: peer.port } : {}),
    ...(typeof ctx.sessionId === 'string' ? { sessionId: ctx.sessionId } : {}),
  };
}

/** The host's name and version as it introduced itself (initialize in 2025, each request's meta in 2026-07-28), for the audit record. */
function clientOf({ era, mcp, ctx }: Parameters<typeof askingFor>[0]): { client?: { name?: string; version?: string } } {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const info = (era === 'modern' ? envelope?.[CLIENT_INFO_META_KEY] : mcp.server.getClientVersion()) as { name?: unknown; version?: unknown } | undefined;
  if (!info) return {};
  return { client: { ...cleanedHostText('name', info.name), ...cleanedHostText('version', info.version) } };
}

/** The last few host names and versions as the record keeps them: a host sends the same ones with every call. */
const hostTexts = new Map<string, string>();
const HOST_TEXTS_KEPT = 64;

/** The host names itself: hidden characters are dropped and line breaks escaped before the record keeps it (first 100 characters). */
function cleanedHostText<K extends 'name' | 'version'>(field: K, value: unknown): { [key in K]?: string } {
  if (typeof value !== 'string') return {};
  const raw = value.slice(0, 100);
  let text = hostTexts.get(raw);
  if (text === undefined) {
    text = oneLine(cleanText(raw));
    if (hostTexts.size >= HOST_TEXTS_KEPT) hostTexts.clear();
    hostTexts.set(raw, text);
  }
  return (text ? { [field]: text } : {}) as { [key in K]?: string };
}

/** Our parser as the SDK's validator of a tool's arguments; what it refuses is handed on as RefusedArguments. */
function argumentValidator(args: ArgumentParser): ValidatorProvider {
  return {
    getValidator<T>(): JsonSchemaValidator<T> {
      return (input: unknown) => {
        const parsed = parseArguments(args, (input ?? {}) as Record<string, unknown>);
        const data = parsed.ok ? (parsed.args as T) : (new RefusedArguments(parsed.message) as T);
        return { valid: true, data, errorMessage: undefined };
      };
    },
  };
}

function parseArguments(args: ArgumentParser, raw: Record<string, unknown>): ReturnType<ArgumentParser['parse']> {
  let size: number;
  try {
    size = JSON.stringify(raw).length;
  } catch {
    // A stack overflow on arguments nested a million deep: refused, with the reason.
    return { ok: false, message: 'the arguments are nested too deeply to read; no operation takes more than a few levels. Nothing was sent.' };
  }
  if (size > MAX_ARGUMENT_CHARS) return { ok: false, message: ARGUMENTS_TOO_LARGE };
  return args.parse(raw);
}

/** The request's signal, and a progress notice for every wait (rate limit, pacing, backoff) to a host that sent a progress token. */
function progressReporter(ctx: ServerContext): Pick<CallContext, 'signal' | 'onWait'> {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  let progress = 0;
  return {
    signal: callSignalOf(ctx),
    onWait:
      progressToken === undefined
        ? undefined
        : (waitMs, reason) =>
            void ctx.mcpReq
              .notify({
                method: 'notifications/progress',
                params: { progressToken, progress: ++progress, message: `${reason}: about ${Math.ceil(waitMs / 1000)} s` },
              })
              .catch(() => undefined),
  };
}
