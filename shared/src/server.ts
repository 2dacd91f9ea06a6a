// The server factory: one MCP server per domain, its two tools derived from the catalog.
// Listing tools needs only the domain's manifest; the catalog itself (zod schemas, previews) is
// loaded on the first call. Handlers never throw: every failure becomes an isError result that
// says what to do next.
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { actionAnswer, finishAnswer, readAnswer } from './answers.js';
import type { Domain, Operation, Params } from './catalog.js';
import { isOperationEnabled, type ConfigResult } from './config.js';
import { ConfirmationStore, keyFingerprint, needsConfirmation } from './confirm.js';
import { InputError, describeFailure, type CallStage } from './errors.js';
import { ApiClient, type CallContext as RequestContext } from './http.js';
import { createLogger, type Logger } from './log.js';
import type { DomainManifest, OperationInfo, ToolInfo } from './manifest.js';
import { buildRequest } from './paths.js';
import { WriteJournal, composeStatement, previewAnswer, type Statement } from './preview.js';
import { McpSession, type CallContext } from './protocol.js';
import { keyRedactor } from './redact.js';
import { scrubber } from './render.js';
import { validateParams } from './validate.js';
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
      callTool: async (name, raw, context) => finishAnswer(await answerCall(name, raw, context), redact),
    },
    log,
  );

  // Every answer passes finishAnswer: the key redacted in every form, then the size capped.
  async function answerCall(name: string, raw: Record<string, unknown>, context: CallContext): Promise<CallToolResult> {
    const tool = tools.get(name);
    if (!tool) return failure(`Unknown tool ${JSON.stringify(name)}; this server has ${[...tools.keys()].join(', ')}.`);
    if (JSON.stringify(raw).length > MAX_ARGUMENT_CHARS) return failure(`The arguments are larger than ${MAX_ARGUMENT_CHARS / 1024 / 1024} MiB; nothing was sent.`);
    const parsed = tool.args.parse(raw);
    if (!parsed.ok) return failure(`Invalid arguments for ${tool.info.name}: ${parsed.message}`);
    return callTool(tool, parsed.args, context);
  }

  async function callTool(tool: OfferedTool, args: ToolArguments, context: CallContext): Promise<CallToolResult> {
    let op: Operation | undefined;
    let stage: CallStage = 'before';
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
      stage = 'sent';
      const data = await client.request({ method: op.method, path: request.path, body: request.body, safe: op.risk === 'safe' }, requestContext);
      stage = 'answered';
      if (tool.info.kind === 'action') journal.record(op.id, params, data);
      return tool.info.kind === 'read' ? readAnswer(op, data, args, scrub) : actionAnswer(op, data, scrub);
    } catch (error) {
      if (!(error instanceof InputError)) log.warn(`${args.operationId} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
      return failure(describeFailure(error, op, stage));
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
            message: `${statement.text}\n\nRun it?`,
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
    return previewAnswer(op, toolName, statement, reason, fresh, new Date(expiresAt).toISOString());
  }

  /** The plain statement of the effect, with whatever facts could be read. A failed look-up is left out. */
  async function describeEffect(op: Operation, params: Params, context: RequestContext): Promise<Statement> {
    const read = (path: string) =>
      client!
        .request({ method: 'GET', path, safe: true }, { signal: context.signal })
        .then(scrub)
        .catch((error: unknown) => {
          log.info(`preview look-up ${path} for ${op.id} failed: ${error instanceof Error ? error.message : String(error)}`);
          return undefined;
        });
    return composeStatement(op, params, read, journal.written, redact);
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

function declined(op: Operation, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: { operationId: op.id, outcome: 'declined' } };
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
