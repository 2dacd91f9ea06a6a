// The server factory: one MCP server per domain, its two tools derived from the catalog.
// The tool definitions are built once, by hand from the catalog, rather than through
// McpServer.registerTool: all fourteen must fit a ~4,000 token budget, and the SDK's generated
// schemas carry noise ($schema, execution, duplicate titles) that would not fit.
// Handlers never throw: every failure becomes an isError result that says what to do next.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { z } from 'zod';
import type { Domain, Operation, Params, ToolSpec } from './catalog.js';
import { isOperationEnabled, type Config, type ConfigResult } from './config.js';
import { ConfirmationStore, keyFingerprint, needsConfirmation } from './confirm.js';
import { InputError, describeFailure } from './errors.js';
import { ApiClient, type CallContext } from './http.js';
import { createLogger, type Logger } from './log.js';
import { buildRequest } from './paths.js';
import { CUSTOMER_TEXT_NOTICE, fitData, shapeList, type ListShape } from './render.js';
import { cleanData } from './sanitize.js';
import { ACTION_OUTPUT_SCHEMA, READ_OUTPUT_SCHEMA, annotations, argumentsSchema, describeTool, paramShape, toInputJsonSchema } from './tools.js';

export const SERVER_VERSION = '0.1.0';
const ELICITATION_TIMEOUT_MS = 10 * 60 * 1000;
/** Larger arguments are refused before parsing further; no operation needs more. */
const MAX_ARGUMENT_CHARS = 4 * 1024 * 1024;

const PASS_THROUGH_VALIDATOR: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

export interface ServerOptions {
  log?: Logger;
  /** Injected in tests; otherwise built from the config. */
  client?: ApiClient;
}

export interface EngageServer {
  server: Server;
  /** The tools actually registered, after read-only mode and the allow and deny lists. */
  tools: Array<{ spec: ToolSpec; operations: Operation[] }>;
  close(): Promise<void>;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type ToolArgs = {
  operationId: string;
  params?: Params;
  confirmationToken?: string;
} & ListShape;

export function createServer(domain: Domain, configResult: ConfigResult, options: ServerOptions = {}): EngageServer {
  const config = configResult.ok ? configResult.config : undefined;
  const log = options.log ?? createLogger(`engage-mcp-${domain.name}`, configResult.ok ? configResult.config.logLevel : configResult.logLevel, config ? [config.apiKey] : []);
  const client = options.client ?? (config ? new ApiClient(config, log) : undefined);
  const confirmations = config ? new ConfirmationStore(keyFingerprint(config.apiKey)) : undefined;
  const server = new Server(
    { name: `engage-mcp-${domain.name}`, title: `engage-mcp: ${domain.title}`, version: SERVER_VERSION },
    // The SDK would build an Ajv instance at start-up just to check elicitation answers; ours
    // are one boolean, checked where they are used, so start-up skips that work.
    { capabilities: { tools: {} }, jsonSchemaValidator: PASS_THROUGH_VALIDATOR },
  );

  const disabled = new Map<string, string>();
  const registered: EngageServer['tools'] = [];
  for (const tool of domain.tools) {
    const operations = tool.operations.filter((op) => {
      if (!config) return true; // unconfigured: every call answers with the configuration problem
      if (isOperationEnabled(config, op.id, op.risk !== 'safe')) return true;
      disabled.set(op.id, config.readOnly && op.risk !== 'safe' ? 'ENGAGE_READ_ONLY is true' : 'it is excluded by ENGAGE_OPERATIONS_ALLOW or ENGAGE_OPERATIONS_DENY');
      return false;
    });
    if (operations.length > 0) registered.push({ spec: tool, operations });
  }
  // An operation of this domain named on the wrong tool gets pointed to the right one.
  for (const { spec, operations } of registered) {
    for (const op of operations) disabled.set(op.id, `it belongs to the tool ${spec.name}`);
  }

  const gated = (op: Operation) => (config ? needsConfirmation(config.confirm, op) : op.risk !== 'safe');
  const tools = registered.map(({ spec, operations }) => {
    const args = argumentsSchema(spec, operations, new Map([...disabled].filter(([id]) => !operations.some((op) => op.id === id))));
    const definition: Tool = {
      name: spec.name,
      title: spec.title,
      description: describeTool(spec, operations, gated),
      inputSchema: toInputJsonSchema(args),
      outputSchema: spec.kind === 'read' ? READ_OUTPUT_SCHEMA : ACTION_OUTPUT_SCHEMA,
      annotations: annotations(spec, operations),
    };
    return { spec, definition, args, byId: new Map(operations.map((op) => [op.id, op])) };
  });
  const toolsByName = new Map(tools.map((tool) => [tool.spec.name, tool]));

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((tool) => tool.definition) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = toolsByName.get(request.params.name);
    if (!tool) return failure(`Unknown tool ${JSON.stringify(request.params.name)}; this server has ${[...toolsByName.keys()].join(', ')}.`);
    const raw = request.params.arguments ?? {};
    if (JSON.stringify(raw).length > MAX_ARGUMENT_CHARS) return failure(`The arguments are larger than ${MAX_ARGUMENT_CHARS / 1024 / 1024} MiB; nothing was sent.`);
    const parsed = tool.args.safeParse(raw);
    if (!parsed.success) {
      const problems = parsed.error.issues.slice(0, 5).map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message));
      return failure(`Invalid arguments for ${tool.spec.name}: ${problems.join('; ')}. Nothing was sent.`);
    }
    return callTool(tool.spec, tool.byId, parsed.data as unknown as ToolArgs, extra);
  });

  async function callTool(spec: ToolSpec, byId: ReadonlyMap<string, Operation>, args: ToolArgs, extra: Extra): Promise<CallToolResult> {
    const { operationId } = args;
    const op = byId.get(operationId);
    try {
      if (!config || !client || !confirmations) {
        const problems = configResult.ok ? [] : configResult.problems;
        return failure(`The ${domain.name} server is not configured, so nothing was sent: ${problems.join(' ')} Fix the server's environment in the host's MCP configuration and restart it.`);
      }
      if (!op) throw new InputError(`operationId ${operationId} is not available on ${spec.name}.`);
      const params = validateParams(op, args.params);
      const request = buildRequest(op, params, domain.operations);
      const context = callContext(extra);

      if (spec.kind === 'action' && gated(op)) {
        const decision = await confirm(op, params, args.confirmationToken, extra, context);
        if (decision) return decision;
      }
      const data = await client.request({ method: op.method, path: request.path, body: request.body, safe: op.risk === 'safe' }, context);
      return spec.kind === 'read' ? readResult(op, data, args) : actionResult(op, data);
    } catch (error) {
      if (!(error instanceof InputError)) log.warn(`${operationId} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
      return failure(describeFailure(error, op));
    }
  }

  /**
   * Asks for a person's yes. Returns a result to answer with (preview, decline, refusal), or
   * undefined when the operation may run.
   */
  async function confirm(op: Operation, params: Params, token: string | undefined, extra: Extra, context: CallContext): Promise<CallToolResult | undefined> {
    const statement = await describeEffect(op, params, context);
    if (server.getClientCapabilities()?.elicitation?.form) {
      let answer;
      try {
        answer = await server.elicitInput(
          {
            message: `${statement}\n\nRun it?`,
            requestedSchema: {
              type: 'object',
              properties: { confirm: { type: 'boolean', title: `Yes, run ${op.id}`, description: 'Only yes runs it.' } },
              required: ['confirm'],
            },
          },
          { signal: extra.signal, timeout: ELICITATION_TIMEOUT_MS },
        );
      } catch (error) {
        log.warn(`confirmation request for ${op.id} failed: ${error instanceof Error ? error.message : String(error)}`);
        return failure(`Could not get the user's confirmation for ${op.id} (the confirmation request failed), so nothing was done. Ask the user, then try again.`);
      }
      if (answer.action === 'accept' && answer.content?.confirm === true) return undefined;
      const how = answer.action === 'accept' ? 'did not say yes' : answer.action === 'decline' ? 'declined' : 'cancelled';
      return declined(op, `The user ${how}: ${op.id} was not run, and nothing was changed. Do not retry unless the user asks.`);
    }

    let reason = '';
    if (token !== undefined) {
      const redemption = confirmations!.redeem(token, op.id, params);
      if (redemption === 'ok') return undefined;
      reason = {
        unknown: 'The confirmationToken is not valid (already used, or never issued): nothing was run.',
        expired: 'The confirmationToken has expired: nothing was run.',
        mismatch: 'The confirmationToken was issued for other params or another operation: nothing was run, and the token is spent.',
      }[redemption];
    }
    const { token: fresh, expiresAt } = confirmations!.issue(op.id, params);
    const expires = new Date(expiresAt).toISOString();
    const instruction = `To run it: show this preview to the user, and only if they agree, call ${toolNameOf(op)} again with the same operationId and params and confirmationToken "${fresh}". The token works once, for exactly these params, until ${expires}.`;
    const text = [reason, `Confirmation needed: ${op.id} has NOT been run.`, statement, instruction].filter(Boolean).join('\n\n');
    return {
      content: [{ type: 'text', text }],
      structuredContent: { operationId: op.id, outcome: 'preview', preview: statement, confirmationToken: fresh, expiresAt: expires },
    };
  }

  function toolNameOf(op: Operation): string {
    return registered.find(({ operations }) => operations.includes(op))?.spec.name ?? `${domain.name}_action`;
  }

  /** The plain statement of the effect, with whatever facts could be read. A failed look-up is left out. */
  async function describeEffect(op: Operation, params: Params, context: CallContext): Promise<string> {
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
    server,
    tools: registered,
    async close() {
      await server.close().catch(() => undefined);
      await client?.close();
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

function callContext(extra: Extra): CallContext {
  const progressToken = extra._meta?.progressToken;
  let progress = 0;
  return {
    signal: extra.signal,
    onWait:
      progressToken === undefined
        ? undefined
        : (waitMs, reason) => {
            progress += 1;
            extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress, message: `${reason}: about ${Math.ceil(waitMs / 1000)} s` },
              })
              .catch(() => undefined);
          },
  };
}

function readResult(op: Operation, data: unknown, args: ToolArgs): CallToolResult {
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
  const ignoredShaping = ['limit', 'offset', 'fields', 'search'].filter((key) => (args as unknown as Record<string, unknown>)[key] !== undefined);
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

function declined(op: Operation, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: { operationId: op.id, outcome: 'declined' } };
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

export type { Config };
