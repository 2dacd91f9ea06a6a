// The server factory: one MCP server per domain, its two tools derived from the catalog, served
// by the official SDK (both protocol eras). Listing tools needs only the domain's manifest; the
// catalog itself (zod schemas, previews) is loaded on the first call. Handlers never throw: every
// failure becomes an isError result that says what to do next.
import { randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  McpServer,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  type CallToolResult,
  type ClientCapabilities,
  type InputRequiredResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { actionAnswer, finishAnswer, readAnswer } from './answers.js';
import { registerViews, toolViewMeta, viewOf, type ViewInfo } from './apps.js';
import type { Domain, Operation, Params } from './catalog.js';
import { isOperationEnabled, type ConfigResult } from './config.js';
import { Confirmations, MemorySpentStore, keyFingerprint, needsConfirmation, type Redemption, type SpentStore } from './confirm.js';
import { InputError, describeFailure, type CallStage } from './errors.js';
import { ApiClient, type CallContext as RequestContext } from './http.js';
import { createLogger, type Logger } from './log.js';
import type { DomainManifest, OperationInfo, ToolInfo } from './manifest.js';
import { buildRequest } from './paths.js';
import { WriteJournal, composeStatement, previewAnswer, type Statement } from './preview.js';
import { keyRedactor } from './redact.js';
import { scrubber } from './render.js';
import { smallValidator } from './schema-check.js';
import { listBodyReader } from './stream-list.js';
import { ACTION_OUTPUT_SCHEMA, READ_OUTPUT_SCHEMA, annotations, describeTool, serverInstructions, toolArguments, type ArgumentParser, type ToolArguments } from './tools.js';
import { validateParams } from './validate.js';

export const SERVER_VERSION = '0.1.0';
const ELICITATION_TIMEOUT_MS = 10 * 60 * 1000;
/** Larger arguments are refused before anything else; no operation needs more. */
const MAX_ARGUMENT_CHARS = 4 * 1024 * 1024;
/** The key of our one question in an MRTR round. */
const CONFIRM_INPUT = 'confirm';

export interface ServerOptions {
  log?: Logger;
  /** Where spent confirmation tokens and requestStates are remembered; in-process by default. */
  spent?: SpentStore;
  /** The HMAC secret for tokens and requestStates; random per process by default (one process honours its own). */
  secret?: Uint8Array;
}

export interface EngageServer {
  /**
   * A fresh SDK server for one connection (stdio) or one request (HTTP), for the era the SDK's
   * serving entry chose; every instance shares the API client and confirmations.
   */
  createMcpServer(context?: { era: ProtocolEra }): McpServer;
  /** The tools offered, after read-only mode and the allow and deny lists. */
  tools: Array<{ info: ToolInfo; operations: OperationInfo[] }>;
  instructions: string;
  close(): Promise<void>;
}

interface OfferedTool {
  info: ToolInfo;
  operations: OperationInfo[];
  description: string;
  args: ArgumentParser;
  /** The MCP Apps view its results are shown in, by hosts that render them. */
  view?: ViewInfo;
}

/** What the handler needs of the connection it serves: its era, the SDK server (for 2025-era capabilities) and the request's context. */
interface Exchange {
  era: ProtocolEra;
  mcp: McpServer;
  ctx: ServerContext;
}

export type ProtocolEra = 'legacy' | 'modern';

export function createServer(manifest: DomainManifest, loadCatalog: () => Promise<Domain>, configResult: ConfigResult, options: ServerOptions = {}): EngageServer {
  const config = configResult.ok ? configResult.config : undefined;
  const log = options.log ?? createLogger(`engage-mcp-${manifest.name}`, configResult.ok ? configResult.config.logLevel : configResult.logLevel, config ? [config.apiKey] : []);
  const client = config ? new ApiClient(config, log) : undefined;
  const keyId = config ? keyFingerprint(config.apiKey) : '';
  const confirmations = new Confirmations({ secret: options.secret ?? randomBytes(32), store: options.spent ?? new MemorySpentStore() });
  const gated = (op: { risk: OperationInfo['risk'] }) => (config ? needsConfirmation(config.confirm, op) : op.risk !== 'safe');
  const redact = keyRedactor(config ? [config.apiKey] : []);
  const scrub = scrubber(redact);
  const journal = new WriteJournal();
  let catalog: Promise<Domain> | undefined;

  // Which operations are offered, and why the others are not (for a clear refusal).
  const disabled = new Map<string, string>();
  const offered: Array<{ info: ToolInfo; operations: OperationInfo[] }> = [];
  for (const info of manifest.tools) {
    const operations = info.operations.filter((op) => {
      if (!config) return true; // unconfigured: every call answers with the configuration problem
      if (isOperationEnabled(config, op.id, op.risk !== 'safe')) return true;
      disabled.set(op.id, config.readOnly && op.risk !== 'safe' ? 'ENGAGE_READ_ONLY is true' : 'it is excluded by ENGAGE_OPERATIONS_ALLOW or ENGAGE_OPERATIONS_DENY');
      return false;
    });
    if (operations.length > 0) offered.push({ info, operations });
  }
  for (const { info, operations } of offered) for (const op of operations) disabled.set(op.id, `it belongs to the tool ${info.name}`);

  const tools: OfferedTool[] = offered.map(({ info, operations }) => ({
    info,
    operations,
    description: describeTool(info, operations, gated),
    args: toolArguments(info, operations, new Map([...disabled].filter(([id]) => !operations.some((op) => op.id === id)))),
    view: viewOf(info, operations, gated),
  }));
  const instructions = serverInstructions(manifest, offered, gated);

  function createMcpServer({ era }: { era: ProtocolEra } = { era: 'legacy' }): McpServer {
    const mcp = new McpServer(
      { name: `engage-mcp-${manifest.name}`, title: `engage-mcp: ${manifest.title}`, version: SERVER_VERSION },
      { capabilities: { tools: { listChanged: false } }, instructions, jsonSchemaValidator: smallValidator },
    );
    for (const tool of tools) {
      mcp.registerTool(
        tool.info.name,
        {
          title: tool.info.title,
          description: tool.description,
          inputSchema: fromJsonSchema<ToolArguments>(tool.args.jsonSchema, argumentValidator(tool.args)),
          outputSchema: fromJsonSchema(tool.info.kind === 'read' ? READ_OUTPUT_SCHEMA : ACTION_OUTPUT_SCHEMA, smallValidator),
          annotations: annotations(tool.info, tool.operations),
          ...toolViewMeta(tool.view),
        },
        // Every answer passes finishAnswer: the key redacted in every form, then the size capped.
        async (args: ToolArguments, ctx: ServerContext) => {
          const result = await callTool(tool, args, { era, mcp, ctx });
          return 'resultType' in result && result.resultType === 'input_required' ? result : finishAnswer(result as CallToolResult, redact);
        },
      );
    }
    registerViews(mcp, tools.map((tool) => tool.view));
    return mcp;
  }

  async function callTool(tool: OfferedTool, args: ToolArguments, exchange: Exchange): Promise<CallToolResult | InputRequiredResult> {
    let op: Operation | undefined;
    let stage: CallStage = 'before';
    try {
      if (!config || !client) {
        const problems = configResult.ok ? [] : configResult.problems;
        return failure(`The ${manifest.name} server is not configured, so nothing was sent: ${problems.join(' ')} Fix the server's environment in the host's MCP configuration and restart it.`);
      }
      catalog ??= loadCatalog();
      const { operations } = await catalog;
      op = operations.find((candidate) => candidate.id === args.operationId);
      if (!op) throw new InputError(`operationId ${args.operationId} is not in the catalog.`);
      const params = validateParams(op, args.params);
      const request = buildRequest(op, params, operations);
      const requestContext = progressReporter(exchange.ctx);

      if (tool.info.kind === 'action' && gated(op)) {
        const refusal = await confirm(op, tool.info.name, params, args.confirmationToken, exchange, requestContext);
        if (refusal) return refusal;
      }
      stage = 'sent';
      // A read of a list reads its body as it arrives once it is large (stream-list.ts).
      const readBody = tool.info.kind === 'read' && op.list ? listBodyReader(args, op.list.idField) : undefined;
      const data = await client.request({ method: op.method, path: request.path, body: request.body, safe: op.risk === 'safe', ...(readBody ? { readBody } : {}) }, requestContext);
      stage = 'answered';
      if (tool.info.kind === 'action') journal.record(op.id, params, data);
      return tool.info.kind === 'read' ? readAnswer(op, data, args, scrub) : actionAnswer(op, data, scrub);
    } catch (error) {
      if (!(error instanceof InputError)) log.warn(`${args.operationId} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
      return failure(describeFailure(error, op, stage));
    }
  }

  /**
   * Asks for a person's yes. Returns the answer to give instead (a question, a preview, a decline),
   * or undefined when the operation may run. Three paths, one binding (operation, exact params,
   * key, expiry, single use): a 2026-07-28 host with elicitation gets an input_required round
   * whose requestState is signed; a 2025 host with elicitation gets elicitation/create; any other
   * host, or one whose elicitation failed, gets a preview with a confirmationToken.
   */
  async function confirm(op: Operation, toolName: string, params: Params, token: string | undefined, { mcp, ctx, era }: Exchange, context: RequestContext): Promise<CallToolResult | InputRequiredResult | undefined> {
    let reason = '';
    if (token !== undefined) {
      const redemption = await confirmations.redeem('token', token, keyId, op.id, params);
      if (redemption === 'ok') return undefined;
      // A genuine token for this very call, used before: the yes was given and spent. A retry must
      // not be handed a new way to say yes to what may already have happened.
      if (redemption === 'spent') return alreadyUsed(op, 'confirmationToken');
      reason = TOKEN_REFUSALS[redemption];
    }

    // The era comes from the connection (the SDK's serving entry), never from what a request claims.
    const modern = era === 'modern';
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    const capabilities = (modern ? envelope?.[CLIENT_CAPABILITIES_META_KEY] : mcp.server.getClientCapabilities()) as ClientCapabilities | undefined;
    // A host that can ask the person is always asked: a token, valid or not, never replaces the question there.
    const canElicit = capabilities?.elicitation !== undefined && (capabilities.elicitation.form !== undefined || Object.keys(capabilities.elicitation).length === 0);

    if (modern) {
      // A retry of an input_required round: its requestState must be ours, for this call, unspent.
      const state = ctx.mcpReq.requestState<unknown>();
      if (typeof state === 'string') {
        const redemption = await confirmations.redeem('state', state, keyId, op.id, params);
        if (redemption === 'spent') return alreadyUsed(op, 'requestState');
        if (redemption === 'ok') {
          const answer = inputResponse(ctx.mcpReq.inputResponses, CONFIRM_INPUT);
          if (answer.kind === 'elicit') return answer.action === 'accept' && answer.content?.confirm === true ? undefined : declinedBy(op, answer.action);
          // The host could not ask (its elicitation failed): the preview and token instead.
          return preview(op, toolName, params, context, 'The confirmation question could not be shown.');
        }
        log.info(`requestState for ${op.id} refused (${redemption}); asking again`);
      }
      if (canElicit) {
        const statement = await describeEffect(op, params, context);
        return inputRequired({
          inputRequests: { [CONFIRM_INPUT]: inputRequired.elicit({ message: `${statement.text}\n\nRun it?`, requestedSchema: confirmSchema(op) }) },
          requestState: confirmations.issue('state', keyId, op.id, params).value,
        });
      }
    } else if (canElicit) {
      const statement = await describeEffect(op, params, context);
      try {
        const answer = await ctx.mcpReq.elicitInput({ message: `${statement.text}\n\nRun it?`, requestedSchema: confirmSchema(op) }, { signal: context.signal, timeout: ELICITATION_TIMEOUT_MS });
        return answer.action === 'accept' && answer.content?.confirm === true ? undefined : declinedBy(op, answer.action);
      } catch (error) {
        if (context.signal?.aborted) throw error;
        log.warn(`confirmation request for ${op.id} failed, falling back to a preview: ${error instanceof Error ? error.message : String(error)}`);
        return preview(op, toolName, params, context, 'The confirmation question could not be shown.');
      }
    }
    return preview(op, toolName, params, context, reason);
  }

  /** A preview that runs nothing, with a fresh single-use token for the same call. */
  async function preview(op: Operation, toolName: string, params: Params, context: RequestContext, reason: string): Promise<CallToolResult> {
    const statement = await describeEffect(op, params, context);
    const { value: fresh, expiresAt } = confirmations.issue('token', keyId, op.id, params);
    return previewAnswer(op, toolName, statement, reason, fresh, new Date(expiresAt).toISOString());
  }

  /** The plain statement of the effect, with whatever facts could be read. A failed look-up is left out. */
  async function describeEffect(op: Operation, params: Params, context: RequestContext): Promise<Statement> {
    const read = (path: string) =>
      client!
        .request({ method: 'GET', path, safe: true }, context)
        .then(scrub)
        .catch((error: unknown) => {
          log.info(`preview look-up ${path} for ${op.id} failed: ${error instanceof Error ? error.message : String(error)}`);
          return undefined;
        });
    return composeStatement(op, params, read, journal.written, redact);
  }

  return {
    createMcpServer,
    tools: offered,
    instructions,
    async close() {
      await client?.close();
    },
  };
}

const TOKEN_REFUSALS: Record<Exclude<Redemption, 'ok' | 'spent'>, string> = {
  unknown: 'The confirmationToken is not valid (never issued by this server, or altered): nothing was run.',
  expired: 'The confirmationToken has expired: nothing was run.',
  mismatch: 'The confirmationToken was issued for other params or another operation: nothing was run, and the token is spent.',
};

/** A genuine confirmation presented again: final, with no new token and no new question. */
function alreadyUsed(op: Operation, what: 'confirmationToken' | 'requestState'): CallToolResult {
  const check = op.verifyWith ? ` Check with ${op.verifyWith}` : ' Check the current state';
  const text = `This ${what} was already used for exactly this ${op.id}, so it may already have been carried out; nothing was done now.${check} before asking the user again.`;
  return { content: [{ type: 'text', text }], isError: true };
}

function confirmSchema(op: Operation) {
  return {
    type: 'object' as const,
    properties: { confirm: { type: 'boolean' as const, title: `Yes, run ${op.id}`, description: 'Only yes runs it.' } },
    required: ['confirm'],
  };
}

/** The SDK validates a call's arguments through this: our parser, with its messages. */
function argumentValidator(args: ArgumentParser) {
  return {
    getValidator: <T>() =>
      (input: unknown) => {
        const raw = (input ?? {}) as Record<string, unknown>;
        if (JSON.stringify(raw).length > MAX_ARGUMENT_CHARS) return { valid: false as const, data: undefined, errorMessage: `the arguments are larger than ${MAX_ARGUMENT_CHARS / 1024 / 1024} MiB; nothing was sent.` };
        const parsed = args.parse(raw);
        return parsed.ok ? { valid: true as const, data: parsed.args as T, errorMessage: undefined } : { valid: false as const, data: undefined, errorMessage: parsed.message };
      },
  };
}

/** Tells a host that sent a progress token about every wait (rate limit, pacing, backoff). */
function progressReporter(ctx: ServerContext): RequestContext {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  let progress = 0;
  return {
    signal: ctx.mcpReq.signal,
    onWait:
      progressToken === undefined
        ? undefined
        : (waitMs, reason) =>
            void ctx.mcpReq
              .notify({ method: 'notifications/progress', params: { progressToken, progress: ++progress, message: `${reason}: about ${Math.ceil(waitMs / 1000)} s` } })
              .catch(() => undefined),
  };
}

function declinedBy(op: Operation, action: string): CallToolResult {
  const how = action === 'accept' ? 'did not say yes' : action === 'decline' ? 'declined' : 'cancelled';
  const text = `The user ${how}: ${op.id} was not run, and nothing was changed. Do not retry unless the user asks.`;
  return { content: [{ type: 'text', text }], structuredContent: { operationId: op.id, outcome: 'declined' } };
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
