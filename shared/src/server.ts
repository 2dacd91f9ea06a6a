// The server factory: one MCP server per domain, its two tools derived from the catalog, served
// by the official SDK (both protocol eras). Listing tools needs only the domain's manifest; the
// catalog itself (zod schemas, previews) is loaded on the first call. Handlers never throw: every
// failure becomes an isError result that says what to do next.
import { randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  McpServer,
  PROTOCOL_VERSION_META_KEY,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  type CallToolResult,
  type ClientCapabilities,
  type InputRequiredResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { registerViews, toolViewMeta, viewOf, type ViewInfo } from './apps.js';
import type { Domain, Operation, Params } from './catalog.js';
import { isOperationEnabled, type ConfigResult } from './config.js';
import { Confirmations, MemorySpentStore, keyFingerprint, needsConfirmation, type Redemption, type SpentStore } from './confirm.js';
import { InputError, describeFailure } from './errors.js';
import { ApiClient, type CallContext as RequestContext } from './http.js';
import { createLogger, type Logger } from './log.js';
import { paramShape, type DomainManifest, type OperationInfo, type ToolInfo } from './manifest.js';
import { buildRequest } from './paths.js';
import { CUSTOMER_TEXT_NOTICE, fitData, shapeList } from './render.js';
import { cleanData } from './sanitize.js';
import { smallValidator } from './schema-check.js';
import { ACTION_OUTPUT_SCHEMA, READ_OUTPUT_SCHEMA, annotations, describeTool, serverInstructions, toolArguments, type ArgumentParser, type ToolArguments } from './tools.js';

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
  /** A fresh SDK server for one connection (stdio) or one request (HTTP); every instance shares the API client and confirmations. */
  createMcpServer(): McpServer;
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

/** What the handler needs of the connection it serves: the SDK server (for 2025-era capabilities) and the request's context. */
interface Exchange {
  mcp: McpServer;
  ctx: ServerContext;
}

export function createServer(manifest: DomainManifest, loadCatalog: () => Promise<Domain>, configResult: ConfigResult, options: ServerOptions = {}): EngageServer {
  const config = configResult.ok ? configResult.config : undefined;
  const log = options.log ?? createLogger(`engage-mcp-${manifest.name}`, configResult.ok ? configResult.config.logLevel : configResult.logLevel, config ? [config.apiKey] : []);
  const client = config ? new ApiClient(config, log) : undefined;
  const keyId = config ? keyFingerprint(config.apiKey) : '';
  const confirmations = new Confirmations({ secret: options.secret ?? randomBytes(32), store: options.spent ?? new MemorySpentStore() });
  const gated = (op: { risk: OperationInfo['risk'] }) => (config ? needsConfirmation(config.confirm, op) : op.risk !== 'safe');
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

  function createMcpServer(): McpServer {
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
        (args: ToolArguments, ctx: ServerContext) => callTool(tool, args, { mcp, ctx }),
      );
    }
    registerViews(mcp, tools.map((tool) => tool.view));
    return mcp;
  }

  async function callTool(tool: OfferedTool, args: ToolArguments, exchange: Exchange): Promise<CallToolResult | InputRequiredResult> {
    let op: Operation | undefined;
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
      const data = await client.request({ method: op.method, path: request.path, body: request.body, safe: op.risk === 'safe' }, requestContext);
      return tool.info.kind === 'read' ? readResult(op, data, args) : actionResult(op, data);
    } catch (error) {
      if (!(error instanceof InputError)) log.warn(`${args.operationId} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
      return failure(describeFailure(error, op));
    }
  }

  /**
   * Asks for a person's yes. Returns the answer to give instead (a question, a preview, a decline),
   * or undefined when the operation may run. Three paths, one binding (operation, exact params,
   * key, expiry, single use): a 2026-07-28 host with elicitation gets an input_required round
   * whose requestState is signed; a 2025 host with elicitation gets elicitation/create; any other
   * host, or one whose elicitation failed, gets a preview with a confirmationToken.
   */
  async function confirm(op: Operation, toolName: string, params: Params, token: string | undefined, { mcp, ctx }: Exchange, context: RequestContext): Promise<CallToolResult | InputRequiredResult | undefined> {
    let reason = '';
    if (token !== undefined) {
      const redemption = await confirmations.redeem('token', token, keyId, op.id, params);
      if (redemption === 'ok') return undefined;
      reason = TOKEN_REFUSALS[redemption];
    }

    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    const modern = typeof envelope?.[PROTOCOL_VERSION_META_KEY] === 'string';
    const capabilities = (modern ? envelope?.[CLIENT_CAPABILITIES_META_KEY] : mcp.server.getClientCapabilities()) as ClientCapabilities | undefined;
    const canElicit = token === undefined && capabilities?.elicitation !== undefined && (capabilities.elicitation.form !== undefined || Object.keys(capabilities.elicitation).length === 0);

    if (modern) {
      // A retry of an input_required round: its requestState must be ours, for this call, unspent.
      const state = ctx.mcpReq.requestState<unknown>();
      if (typeof state === 'string') {
        const redemption = await confirmations.redeem('state', state, keyId, op.id, params);
        const answer = inputResponse(ctx.mcpReq.inputResponses, CONFIRM_INPUT);
        if (redemption === 'ok') {
          if (answer.kind === 'elicit') return answer.action === 'accept' && answer.content?.confirm === true ? undefined : declinedBy(op, answer.action);
          // The host could not ask (its elicitation failed): the preview and token instead.
          return preview(op, toolName, params, context, 'The confirmation question could not be shown.');
        }
        log.info(`requestState for ${op.id} refused (${redemption}); asking again`);
      }
      if (canElicit) {
        const statement = await describeEffect(op, params, context);
        return inputRequired({
          inputRequests: { [CONFIRM_INPUT]: inputRequired.elicit({ message: `${statement}\n\nRun it?`, requestedSchema: confirmSchema(op) }) },
          requestState: confirmations.issue('state', keyId, op.id, params).value,
        });
      }
    } else if (canElicit) {
      const statement = await describeEffect(op, params, context);
      try {
        const answer = await ctx.mcpReq.elicitInput({ message: `${statement}\n\nRun it?`, requestedSchema: confirmSchema(op) }, { signal: context.signal, timeout: ELICITATION_TIMEOUT_MS });
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
    const expires = new Date(expiresAt).toISOString();
    const instruction = `To run it: show this preview to the user, and only if they agree, call ${toolName} again with the same operationId and params and confirmationToken "${fresh}". The token works once, for exactly these params, until ${expires}.`;
    const text = [reason, `Confirmation needed: ${op.id} has NOT been run.`, statement, instruction].filter(Boolean).join('\n\n');
    return {
      content: [{ type: 'text', text }],
      structuredContent: { operationId: op.id, outcome: 'preview', preview: statement, confirmationToken: fresh, expiresAt: expires },
    };
  }

  /** The plain statement of the effect, with whatever facts could be read. A failed look-up is left out. */
  async function describeEffect(op: Operation, params: Params, context: RequestContext): Promise<string> {
    const confirmation = op.confirmation!;
    const lines = [confirmation.effect(params)];
    if (confirmation.facts && client) {
      const read = (path: string) =>
        client
          .request({ method: 'GET', path, safe: true }, { signal: context.signal })
          .then(cleanData)
          .catch((error: unknown) => {
            log.info(`preview look-up ${path} for ${op.id} failed: ${error instanceof Error ? error.message : String(error)}`);
            return undefined;
          });
      const facts = await confirmation.facts(params, read).catch(() => []);
      for (const fact of facts) if (fact) lines.push(`- ${fact}`);
    }
    if (confirmation.irreversible) lines.push(`This cannot be undone: ${confirmation.irreversible}`);
    return lines.join('\n');
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

const TOKEN_REFUSALS: Record<Exclude<Redemption, 'ok'>, string> = {
  unknown: 'The confirmationToken is not valid (already used, or never issued): nothing was run.',
  spent: 'The confirmationToken is not valid (already used, or never issued): nothing was run.',
  expired: 'The confirmationToken has expired: nothing was run.',
  mismatch: 'The confirmationToken was issued for other params or another operation: nothing was run, and the token is spent.',
};

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

/** Validates params with the operation's schema; the error names each bad field and the shape. */
export function validateParams(op: Operation, raw: unknown): Params {
  const result = op.params.safeParse(raw ?? {});
  if (result.success) return result.data as Params;
  const problems = result.error.issues.slice(0, 5).map((issue) => describeIssue(issue, raw));
  throw new InputError(`Invalid params for ${op.id}: ${problems.join('; ')}. Expected params ${paramShape(op)}. Nothing was sent.`, op);
}

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => `params.${key} is not a field of this operation`).join('; ');
  const path = issue.path.length > 0 ? `params.${issue.path.join('.')}` : 'params';
  let value: unknown = raw;
  for (const key of issue.path) value = value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  if (value === undefined && issue.path.length > 0) return `${path} is required`;
  return `${path} ${issue.message.replace(/^Invalid input: /, '')}`;
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

function readResult(op: Operation, data: unknown, args: ToolArguments): CallToolResult {
  const notes = op.customerText ? [CUSTOMER_TEXT_NOTICE] : [];
  if (op.list && Array.isArray(data)) {
    const shaped = shapeList(data, args, op.list.idField);
    notes.push(...shaped.notes);
    const { page } = shaped;
    const range = page.returned === 0 ? 'no records' : `records ${page.offset + 1}–${page.offset + page.returned}`;
    const filtered = page.matched !== page.total ? ` (${page.matched} match the filter)` : '';
    const next = page.nextOffset !== undefined ? ` Next page: offset ${page.nextOffset}.` : ' No more records.';
    const head = `${op.id}: ${range} of ${page.total}${filtered}.${next}`;
    const text = [head, ...notes, ...shaped.items.map((item) => JSON.stringify(item))].join('\n');
    return {
      content: [{ type: 'text', text }],
      structuredContent: { operationId: op.id, data: shaped.items, page, ...(notes.length ? { notes } : {}) },
    };
  }
  const ignoredShaping = (['limit', 'offset', 'fields', 'search'] as const).filter((key) => args[key] !== undefined);
  if (ignoredShaping.length > 0) notes.push(`${ignoredShaping.join(', ')} apply to list operations only and were ignored.`);
  if (op.list) notes.push('The API returned this list as something other than an array; shown as it came.');
  const fitted = fitData(data);
  notes.push(...fitted.notes);
  const text = [`${op.id}:`, ...notes, JSON.stringify(fitted.data ?? null)].join('\n');
  return {
    content: [{ type: 'text', text }],
    structuredContent: { operationId: op.id, data: fitted.data ?? null, ...(notes.length ? { notes } : {}) },
  };
}

function actionResult(op: Operation, data: unknown): CallToolResult {
  const fitted = fitData(data);
  const text = [`Done: ${op.id} was carried out.`, ...fitted.notes, JSON.stringify(fitted.data ?? null)].join('\n');
  return {
    content: [{ type: 'text', text }],
    structuredContent: { operationId: op.id, outcome: 'done', data: fitted.data ?? null, ...(fitted.notes.length ? { notes: fitted.notes } : {}) },
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
