// The server factory: one MCP server per domain, its two tools derived from the catalog.
// Listing tools needs only the domain's manifest; the catalog itself (zod schemas, previews) is
// loaded on the first call. Handlers never throw: every failure becomes an isError result that
// says what to do next.
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { Domain, Operation, Params } from './catalog.js';
import { isOperationEnabled, type ConfigResult } from './config.js';
import { ConfirmationStore, keyFingerprint, needsConfirmation } from './confirm.js';
import { InputError, describeFailure } from './errors.js';
import { ApiClient, type CallContext as RequestContext } from './http.js';
import { createLogger, type Logger } from './log.js';
import { paramShape, type DomainManifest, type OperationInfo, type ToolInfo } from './manifest.js';
import { buildRequest } from './paths.js';
import { McpSession, type CallContext } from './protocol.js';
import { CUSTOMER_TEXT_NOTICE, fitData, shapeList } from './render.js';
import { cleanData } from './sanitize.js';
import { ACTION_OUTPUT_SCHEMA, READ_OUTPUT_SCHEMA, annotations, describeTool, toolArguments, type ArgumentParser, type ToolArguments } from './tools.js';

export const SERVER_VERSION = '0.1.0';
const ELICITATION_TIMEOUT_MS = 10 * 60 * 1000;
/** Larger arguments are refused before anything else; no operation needs more. */
const MAX_ARGUMENT_CHARS = 4 * 1024 * 1024;

export interface ServerOptions {
  log?: Logger;
}

export interface EngageServer {
  server: McpSession;
  /** The tools offered, after read-only mode and the allow and deny lists. */
  tools: Array<{ info: ToolInfo; operations: OperationInfo[] }>;
  close(): Promise<void>;
}

interface OfferedTool {
  info: ToolInfo;
  operations: OperationInfo[];
  definition: Tool;
  args: ArgumentParser;
}

export function createServer(manifest: DomainManifest, loadCatalog: () => Promise<Domain>, configResult: ConfigResult, options: ServerOptions = {}): EngageServer {
  const config = configResult.ok ? configResult.config : undefined;
  const log = options.log ?? createLogger(`engage-mcp-${manifest.name}`, configResult.ok ? configResult.config.logLevel : configResult.logLevel, config ? [config.apiKey] : []);
  const client = config ? new ApiClient(config, log) : undefined;
  const confirmations = config ? new ConfirmationStore(keyFingerprint(config.apiKey)) : undefined;
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

  const tools = new Map<string, OfferedTool>(
    offered.map(({ info, operations }) => {
      const args = toolArguments(info, operations, new Map([...disabled].filter(([id]) => !operations.some((op) => op.id === id))));
      const definition: Tool = {
        name: info.name,
        title: info.title,
        description: describeTool(info, operations, gated),
        inputSchema: args.jsonSchema,
        outputSchema: info.kind === 'read' ? READ_OUTPUT_SCHEMA : ACTION_OUTPUT_SCHEMA,
        annotations: annotations(info, operations),
      };
      return [info.name, { info, operations, definition, args }];
    }),
  );

  const session = new McpSession(
    { name: `engage-mcp-${manifest.name}`, title: `engage-mcp: ${manifest.title}`, version: SERVER_VERSION },
    {
      listTools: () => [...tools.values()].map((tool) => tool.definition),
      callTool: async (name, raw, context) => {
        const tool = tools.get(name);
        if (!tool) return failure(`Unknown tool ${JSON.stringify(name)}; this server has ${[...tools.keys()].join(', ')}.`);
        if (JSON.stringify(raw).length > MAX_ARGUMENT_CHARS) return failure(`The arguments are larger than ${MAX_ARGUMENT_CHARS / 1024 / 1024} MiB; nothing was sent.`);
        const parsed = tool.args.parse(raw);
        if (!parsed.ok) return failure(`Invalid arguments for ${tool.info.name}: ${parsed.message}`);
        return callTool(tool, parsed.args, context);
      },
    },
    log,
  );

  async function callTool(tool: OfferedTool, args: ToolArguments, context: CallContext): Promise<CallToolResult> {
    let op: Operation | undefined;
    try {
      if (!config || !client || !confirmations) {
        const problems = configResult.ok ? [] : configResult.problems;
        return failure(`The ${manifest.name} server is not configured, so nothing was sent: ${problems.join(' ')} Fix the server's environment in the host's MCP configuration and restart it.`);
      }
      catalog ??= loadCatalog();
      const { operations } = await catalog;
      op = operations.find((candidate) => candidate.id === args.operationId);
      if (!op) throw new InputError(`operationId ${args.operationId} is not in the catalog.`);
      const params = validateParams(op, args.params);
      const request = buildRequest(op, params, operations);
      const requestContext = progressReporter(context);

      if (tool.info.kind === 'action' && gated(op)) {
        const refusal = await confirm(op, tool.info.name, params, args.confirmationToken, requestContext);
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
   * Asks for a person's yes. Returns the answer to give instead (a preview, a decline, a
   * refusal), or undefined when the operation may run.
   */
  async function confirm(op: Operation, toolName: string, params: Params, token: string | undefined, context: RequestContext): Promise<CallToolResult | undefined> {
    if (session.getClientCapabilities()?.elicitation?.form) {
      const statement = await describeEffect(op, params, context);
      let answer: { action?: unknown; content?: { confirm?: unknown } };
      try {
        answer = (await session.request(
          'elicitation/create',
          {
            message: `${statement}\n\nRun it?`,
            requestedSchema: {
              type: 'object',
              properties: { confirm: { type: 'boolean', title: `Yes, run ${op.id}`, description: 'Only yes runs it.' } },
              required: ['confirm'],
            },
          },
          { signal: context.signal, timeoutMs: ELICITATION_TIMEOUT_MS },
        )) as typeof answer;
      } catch (error) {
        log.warn(`confirmation request for ${op.id} failed: ${error instanceof Error ? error.message : String(error)}`);
        return failure(`Could not get the user's confirmation for ${op.id} (the confirmation request failed), so nothing was done. Ask the user, then try again.`);
      }
      if (answer?.action === 'accept' && answer.content?.confirm === true) return undefined;
      const how = answer?.action === 'accept' ? 'did not say yes' : answer?.action === 'decline' ? 'declined' : 'cancelled';
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
    const statement = await describeEffect(op, params, context);
    const { token: fresh, expiresAt } = confirmations!.issue(op.id, params);
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
    server: session,
    tools: offered,
    async close() {
      await session.close();
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

/** Tells a host that sent a progress token about every wait (rate limit, pacing, backoff). */
function progressReporter(context: CallContext): RequestContext {
  const { progressToken } = context;
  let progress = 0;
  return {
    signal: context.signal,
    onWait:
      progressToken === undefined
        ? undefined
        : (waitMs, reason) => context.notify('notifications/progress', { progressToken, progress: ++progress, message: `${reason}: about ${Math.ceil(waitMs / 1000)} s` }),
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

function declined(op: Operation, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: { operationId: op.id, outcome: 'declined' } };
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
