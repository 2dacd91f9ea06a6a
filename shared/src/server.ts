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
import { InputError, UpstreamError, describeFailure, type CallStage } from './errors.js';
import { ApiClient, type CallContext } from './http.js';
import { createLogger, type Logger } from './log.js';
import type { DomainManifest, OperationInfo, ToolInfo } from './manifest.js';
import { buildRequest } from './paths.js';
import { WriteJournal, composeStatement, previewAnswer, type Attempt, type Statement } from './preview.js';
import type { PaceKeeper } from './pacing.js';
import { keyRedactor, type Redact } from './redact.js';
import { scrubber, type Scrub } from './render.js';
import { smallValidator } from './schema-check.js';
import { ACTION_OUTPUT_SCHEMA, READ_OUTPUT_SCHEMA, annotations, describeTool, serverInstructions, toolArguments, type ArgumentParser, type ToolArguments } from './tools.js';
import { validateParams } from './validate.js';

export const SERVER_VERSION = '0.1.0';
const ELICITATION_TIMEOUT_MS = 10 * 60 * 1000;
/** Larger arguments are refused before anything else; no operation needs more. */
const MAX_ARGUMENT_CHARS = 4 * 1024 * 1024;
/** All of a preview's look-ups together; what is late is left out of the statement. */
const LOOKUP_BUDGET_MS = 6_000;
/** The key of our one question in an MRTR round. */
const CONFIRM_INPUT = 'confirm';

export interface ServerOptions {
  log?: Logger;
  /** Where spent confirmation tokens and requestStates are remembered; in-process by default. */
  spent?: SpentStore;
  /** The HMAC secret for tokens and requestStates; random per process by default (one process honours its own). */
  secret?: Uint8Array;
  /**
   * Remote mode: no key is configured; each call uses the key its HTTP request brought (the SDK's
   * authInfo.token), for that call only, with that key's pace. Confirmations are bound to it.
   */
  remote?: { pace?: (keyFingerprint: string) => PaceKeeper };
  /** The API client to use (remote mode shares one keep-alive pool across domains); one of its own by default. */
  client?: ApiClient;
  /** Told after every tool call (remote mode's metrics): never the key, the params or the answer. */
  onCall?: (call: { domain: string; tool: string; ok: boolean; ms: number }) => void;
}

export interface EngageServer {
  /**
   * A fresh SDK server for one connection (stdio) or one request (HTTP), for the era the SDK's
   * serving entry chose; every instance shares the API client and confirmations.
   */
  createMcpServer(context?: { era: ProtocolEra }): McpServer;
  /** Registers this domain's tools on an SDK server built elsewhere (remote mode's all-tools endpoint); returns the views they use, to register once. */
  registerTools(mcp: McpServer, era: ProtocolEra): Array<ViewInfo | undefined>;
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

/** A call's context: its signal and progress, and whose key it runs with (the configured one, or in remote mode the request's). */
interface RequestContext extends CallContext {
  keyId: string;
  redact: Redact;
  scrub: Scrub;
  journal: WriteJournal;
}


export function createServer(manifest: DomainManifest, loadCatalog: () => Promise<Domain>, configResult: ConfigResult, options: ServerOptions = {}): EngageServer {
  const config = configResult.ok ? configResult.config : undefined;
  const log = options.log ?? createLogger(`engage-mcp-${manifest.name}`, configResult.ok ? configResult.config.logLevel : configResult.logLevel, config ? [config.apiKey] : []);
  const client = config ? (options.client ?? new ApiClient(config, log)) : undefined;
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
    registerViews(mcp, registerTools(mcp, era));
    return mcp;
  }

  /** Whose key a call runs with: the configured one, or in remote mode the one its request brought (undefined: none). */
  function callerOf(ctx: ServerContext): Omit<RequestContext, keyof CallContext> & Pick<CallContext, 'credentials'> | undefined {
    if (!options.remote) return { keyId, redact, scrub, journal };
    const apiKey = ctx.http?.authInfo?.token;
    if (!apiKey) return undefined;
    const id = keyFingerprint(apiKey);
    const own = keyRedactor([apiKey]);
    // One journal for every key: it keeps each key's writes apart, and refused attempts (made-up keys) never push out sent ones.
    return { keyId: id, redact: own, scrub: scrubber(own), journal, credentials: { apiKey, ...(options.remote.pace ? { pace: options.remote.pace(id) } : {}) } };
  }

  function registerTools(mcp: McpServer, era: ProtocolEra): Array<ViewInfo | undefined> {
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
          const started = performance.now();
          const caller = callerOf(ctx);
          const result = caller
            ? await callTool(tool, args, { era, mcp, ctx }, caller)
            : failure('No API key came with this request, so nothing was sent: send the tenant key as Authorization: Bearer <key> or X-API-Key.');
          options.onCall?.({ domain: manifest.name, tool: tool.info.name, ok: !('isError' in result && result.isError), ms: performance.now() - started });
          return 'resultType' in result && result.resultType === 'input_required' ? result : finishAnswer(result as CallToolResult, caller?.redact ?? redact);
        },
      );
    }
    return tools.map((tool) => tool.view);
  }

  async function callTool(tool: OfferedTool, args: ToolArguments, exchange: Exchange, caller: NonNullable<ReturnType<typeof callerOf>>): Promise<CallToolResult | InputRequiredResult> {
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
      const params = validateParams(op, args.params, (text) => caller.redact(text) !== text);
      const request = buildRequest(op, params, operations);
      const requestContext: RequestContext = { ...progressReporter(exchange.ctx), ...caller };

      const write = tool.info.kind === 'action';
      if (write && gated(op)) {
        const answer = await confirm(op, tool.info.name, params, args.confirmationToken, exchange, requestContext);
        if (!isApproval(answer)) return answer;
        // Checked again with nothing awaited before the write is marked: two yeses for the same
        // write racing each other (two tokens, two questions) send it once; and a yes given before
        // the same write went out (an older token, a spent store that Redis lost) sends nothing;
        // in the same millisecond counts as before, so a doubt means asking again.
        const earlier = caller.journal.lastAttempt(caller.keyId, op.id, params);
        if (earlier?.outcome === 'in-flight') return stillRunning(op, earlier);
        if ((earlier?.outcome === 'done' || earlier?.outcome === 'unknown') && earlier.at >= answer.approvedAt) return sentSince(op, earlier);
      }
      stage = 'sent';
      if (write) caller.journal.attempt(caller.keyId, op.id, params, 'in-flight');
      // A read of a list reads its body as it arrives once it is large (stream-list.ts).
      // Loaded on the first list read, so a server's start does not pay for it.
      const readBody = tool.info.kind === 'read' && op.list ? (await import('./stream-list.js')).listBodyReader(args, op.list.idField) : undefined;
      let data: unknown;
      try {
        data = await client.request({ method: op.method, path: request.path, body: request.body, safe: op.risk === 'safe', ...(readBody ? { readBody } : {}) }, requestContext);
      } catch (error) {
        if (write) caller.journal.attempt(caller.keyId, op.id, params, error instanceof UpstreamError && error.details.mayHaveHappened !== true ? 'not-done' : 'unknown');
        throw error;
      }
      stage = 'answered';
      if (write) {
        caller.journal.attempt(caller.keyId, op.id, params, 'done');
        caller.journal.record(caller.keyId, op.id, params, data);
      }
      return tool.info.kind === 'read' ? readAnswer(op, data, args, caller.scrub) : actionAnswer(op, data, caller.scrub);
    } catch (error) {
      if (!(error instanceof InputError)) log.warn(`${args.operationId} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
      const text = describeFailure(error, op, stage);
      return op && tool.info.kind === 'action' ? { ...failure(text), structuredContent: { operationId: op.id, outcome: failedWrite(error, stage) } } : failure(text);
    }
  }

  /**
   * Asks for a person's yes. Returns the answer to give instead (a question, a preview, a decline),
   * or the approval (with when its statement was shown) when the operation may run. Three paths, one binding (operation, exact params,
   * key, expiry, single use): a 2026-07-28 host with elicitation gets an input_required round
   * whose requestState is signed; a 2025 host with elicitation gets elicitation/create; any other
   * host, or one whose elicitation failed, gets a preview with a confirmationToken.
   */
  async function confirm(op: Operation, toolName: string, params: Params, token: string | undefined, { mcp, ctx, era }: Exchange, context: RequestContext): Promise<CallToolResult | InputRequiredResult | Approval> {
    let reason = '';
    // The same write still on its way (a host that timed out and asked again): nothing new runs.
    const earlier = context.journal.lastAttempt(context.keyId, op.id, params);
    if (earlier?.outcome === 'in-flight') return stillRunning(op, earlier);
    if (token !== undefined) {
      const redemption = await confirmations.redeem('token', token, context.keyId, op.id, params);
      if (redemption === 'ok') return { approvedAt: confirmations.issuedAt('token', token) };
      // A genuine token for this very call, used before: the yes was given and spent. A retry must
      // not be handed a new way to say yes to what may already have happened.
      if (redemption === 'spent') return alreadyUsed(op, 'confirmationToken', earlier);
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
        const redemption = await confirmations.redeem('state', state, context.keyId, op.id, params);
        if (redemption === 'spent') return alreadyUsed(op, 'requestState', earlier);
        if (redemption === 'ok') {
          const answer = inputResponse(ctx.mcpReq.inputResponses, CONFIRM_INPUT);
          if (answer.kind === 'elicit') return answer.action === 'accept' && answer.content?.confirm === true ? { approvedAt: confirmations.issuedAt('state', state) } : declinedBy(op, answer.action);
          // The host could not ask (its elicitation failed): the preview and token instead.
          return preview(op, toolName, params, context, 'The confirmation question could not be shown.');
        }
        log.info(`requestState for ${op.id} refused (${redemption}); asking again`);
      }
      if (canElicit) {
        const statement = await describeEffect(op, params, context);
        return inputRequired({
          inputRequests: { [CONFIRM_INPUT]: inputRequired.elicit({ message: `${statement.text}\n\nRun it?`, requestedSchema: confirmSchema(op) }) },
          requestState: confirmations.issue('state', context.keyId, op.id, params).value,
        });
      }
    } else if (canElicit) {
      const askedAt = Date.now();
      const statement = await describeEffect(op, params, context);
      try {
        const answer = await ctx.mcpReq.elicitInput({ message: `${statement.text}\n\nRun it?`, requestedSchema: confirmSchema(op) }, { signal: context.signal, timeout: ELICITATION_TIMEOUT_MS });
        return answer.action === 'accept' && answer.content?.confirm === true ? { approvedAt: askedAt } : declinedBy(op, answer.action);
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
    const { value: fresh, expiresAt } = confirmations.issue('token', context.keyId, op.id, params);
    return previewAnswer(op, toolName, statement, reason, fresh, new Date(expiresAt).toISOString());
  }

  /**
   * The plain statement of the effect, with whatever facts could be read. A failed or late look-up
   * is left out: each gets one short attempt, and all of them LOOKUP_BUDGET_MS together. An
   * identical write this server sent lately is named first, so nobody says yes twice unknowingly.
   */
  async function describeEffect(op: Operation, params: Params, context: RequestContext): Promise<Statement> {
    const budget = AbortSignal.timeout(LOOKUP_BUDGET_MS);
    const lookupContext = { ...context, signal: context.signal ? AbortSignal.any([context.signal, budget]) : budget };
    const read = (path: string) =>
      client!
        .request({ method: 'GET', path, safe: true, lookup: true }, lookupContext)
        .then(context.scrub)
        .catch((error: unknown) => {
          if (context.signal?.aborted) throw error;
          log.info(`preview look-up ${path} for ${op.id} failed: ${error instanceof Error ? error.message : String(error)}`);
          return undefined;
        });
    const statement = await composeStatement(op, params, read, context.journal.writtenWith(context.keyId), context.redact);
    const earlier = context.journal.lastAttempt(context.keyId, op.id, params);
    if (earlier?.outcome === 'done' || earlier?.outcome === 'unknown') {
      const how = earlier.outcome === 'done' ? 'it was carried out' : 'its outcome is unknown (it may have been carried out)';
      const check = op.verifyWith ? ` Check with ${op.verifyWith} first:` : '';
      statement.text = `Warning: this server already sent exactly this ${op.id} at ${new Date(earlier.at).toISOString()}, and ${how}.${check} saying yes now does it again.\n${statement.text}`;
    }
    return statement;
  }

  return {
    createMcpServer,
    registerTools,
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

/**
 * A genuine confirmation presented again: final, with no new token and no new question. What this
 * server knows of the attempt it was spent on is said: carried out, refused, or unknown.
 */
function alreadyUsed(op: Operation, what: 'confirmationToken' | 'requestState', earlier: Attempt | undefined): CallToolResult {
  const check = op.verifyWith ? ` Check with ${op.verifyWith}` : ' Check the current state';
  let text: string;
  if (earlier?.outcome === 'not-done') {
    text = `This ${what} was already used for exactly this ${op.id}, and that attempt was not carried out (the API refused it or it was never sent); nothing was done now. To try again, call without it: the user is asked again.`;
  } else if (earlier?.outcome === 'done') {
    text = `This ${what} was already used for exactly this ${op.id}, and it was carried out at ${new Date(earlier.at).toISOString()}; nothing was done now. Do not repeat it unless the user asks for it again.`;
  } else {
    text = `This ${what} was already used for exactly this ${op.id}, so it may already have been carried out; nothing was done now.${check} before asking the user again.`;
  }
  return { content: [{ type: 'text', text }], isError: true, structuredContent: { operationId: op.id, outcome: earlier?.outcome === 'not-done' ? 'refused' : earlier?.outcome === 'done' ? 'done' : 'unknown' } };
}

/** A person's yes, and when what they said yes to was shown. */
interface Approval {
  approvedAt: number;
}

function isApproval(answer: CallToolResult | InputRequiredResult | Approval): answer is Approval {
  return typeof (answer as Partial<Approval>).approvedAt === 'number';
}

/** The same write went out after this yes was given (by another confirmation): nothing is sent again. */
function sentSince(op: Operation, earlier: Attempt): CallToolResult {
  const how = earlier.outcome === 'done' ? 'it was carried out' : 'its outcome is unknown (it may have been carried out)';
  const check = op.verifyWith ? ` Check with ${op.verifyWith}.` : '';
  const text = `Exactly this ${op.id} was sent by this server at ${new Date(earlier.at).toISOString()}, after this confirmation was given, and ${how}; nothing was done now.${check} To send it again, call without the confirmation: the user is asked again and told about the earlier send.`;
  return { content: [{ type: 'text', text }], isError: true, structuredContent: { operationId: op.id, outcome: 'refused' } };
}

/** The identical write is still on its way: nothing new is sent. */
function stillRunning(op: Operation, earlier: Attempt): CallToolResult {
  const check = op.verifyWith ? `, then check with ${op.verifyWith}` : ', then check the current state';
  const text = `Exactly this ${op.id} is still being sent by this server (since ${new Date(earlier.at).toISOString()}), so nothing new was done. Wait for it to finish${check}.`;
  return { content: [{ type: 'text', text }], isError: true, structuredContent: { operationId: op.id, outcome: 'unknown' } };
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
        let size: number;
        try {
          size = JSON.stringify(raw).length;
        } catch {
          // A stack overflow on arguments nested a million deep: refused, with the reason.
          return { valid: false as const, data: undefined, errorMessage: 'the arguments are nested too deeply to read; no operation takes more than a few levels. Nothing was sent.' };
        }
        if (size > MAX_ARGUMENT_CHARS) return { valid: false as const, data: undefined, errorMessage: `the arguments are larger than ${MAX_ARGUMENT_CHARS / 1024 / 1024} MiB; nothing was sent.` };
        const parsed = args.parse(raw);
        return parsed.ok ? { valid: true as const, data: parsed.args as T, errorMessage: undefined } : { valid: false as const, data: undefined, errorMessage: parsed.message };
      },
  };
}

/** Tells a host that sent a progress token about every wait (rate limit, pacing, backoff). */
function progressReporter(ctx: ServerContext): CallContext {
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

/** What is known of a write that ended in an error, for the structured answer (the MCP Apps card reads it). */
function failedWrite(error: unknown, stage: CallStage): 'done' | 'unknown' | 'refused' {
  if (stage === 'answered') return 'done';
  if (stage === 'before' || error instanceof InputError) return 'refused';
  return error instanceof UpstreamError && error.details.mayHaveHappened !== true ? 'refused' : 'unknown';
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
