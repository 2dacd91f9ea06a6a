// What a tool call carries through its stages, and what the stages may use. The call room never
// touches the SDK at run time: the protocol side (mcp/) builds these and hands them in.
import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';
import type { ConfigResult } from '../model/config.js';
import type { Domain, Operation, Risk, ToolKind } from '../model/types.js';
import type { Logger } from '../safe/log.js';
import type { Redact } from '../safe/redact.js';
import type { Scrub } from '../safe/render.js';
import type { ApiClient, CallContext } from '../upstream/api-client.js';
import type { ConfirmationPath } from './audit.js';
import type { Confirmations } from './confirmations.js';
import type { GuardStore } from './guard-store.js';
import type { Guardrails } from '../model/config.js';
import type { WriteJournal } from './journal.js';
import type { KeyGuesses } from './key-guesses.js';

/** A tool's arguments, as the SDK validated them against the tool's schema. */
export interface ToolArguments {
  operationId: string;
  params?: Record<string, unknown>;
  limit?: number;
  offset?: number;
  fields?: string[];
  search?: string;
  confirmationToken?: string;
  /** The same key with the same operation and params within 24 h answers the first outcome; nothing is sent again. */
  idempotencyKey?: string;
  /** The person wants this send now, inside the quiet hours (shown in the confirmation). */
  quietHoursOverride?: boolean;
}

/** What a call answers: a result, or (2026-07-28) a round that asks the person first. */
export type Reply = CallToolResult | InputRequiredResult;

/** Whose key a call runs with (the configured one, or in remote mode the request's), and that key's redaction and memory of writes. */
export interface Caller {
  keyId: string;
  /** What a confirmation (token, requestState) is bound to, when not the key alone: remote mode's OAuth grant. */
  confirmationsBoundTo?: string;
  redact: Redact;
  scrub: Scrub;
  journal: WriteJournal;
  /** Keys locked because a call's arguments held a part of them (key-guesses.ts). */
  guesses: KeyGuesses;
  /** Remote mode: the request's own key, for this call only, and that key's pace. */
  credentials?: CallContext['credentials'];
  /** Remote mode over OAuth: the API scopes the person granted; an operation outside them is refused before anything is sent. */
  grantedScopes?: ReadonlySet<string>;
  /** The one domain whose endpoint (/mcp/<domain>) the grant was made for; undefined for /mcp, which serves every domain on the one connection. */
  grantDomain?: string;
  /** Remote mode: the request's log (its lines carry the request's id), for this call's lines. */
  log?: Logger;
}

/** The person's answer to a question the host showed them; `unread` when what came back was no answer we can read (a no). */
export interface PersonsAnswer {
  kind: 'answer';
  yes: boolean;
  action: 'accept' | 'decline' | 'cancel' | 'unread';
}

/**
 * The ways a host can ask a person for a yes (mcp/ask.ts builds one per call): elicitation/create
 * in a 2025 session (the answer is awaited), or an input_required round in 2026-07-28 (the host
 * asks, then repeats the call with the answer and our signed requestState).
 */
export interface Asking {
  /** The host declared it can show a question. */
  readonly canAsk: boolean;
  /** A 2026-07-28 repeat of an asked call: the requestState it brought back (not yet verified), and the answer it carried. */
  readonly returned?: { state: string; answer: PersonsAnswer };
  /** Puts the question to the person; `issueState` signs the requestState a round carries. */
  ask(
    question: string,
    op: Operation,
    issueState: () => string,
  ): Promise<PersonsAnswer | { kind: 'round'; round: InputRequiredResult } | { kind: 'not-shown' }>;
}

/** One tool call, as the protocol side hands it in. */
export interface ToolCall {
  toolName: string;
  kind: ToolKind;
  args: ToolArguments;
  caller: Caller;
  /** The request's signal and progress reporting, and (telemetry on) the span of each API request. */
  request: Pick<CallContext, 'signal' | 'onWait' | 'traceAttempt'>;
  asking: Asking;
  /** The host's name and version, as it introduced itself (for the audit record). */
  client?: { name?: string; version?: string };
  /** Telemetry is on: told what the call came to (mcp/telemetry-spans.ts keeps it on the call's span). */
  telemetry?: CallTelemetry;
}

/**
 * What a call tells its span as it ends. Only our own words: a catalog's operation id (never one
 * the model made up), how the yes was given, and the outcome; never params, answers or the key.
 */
export interface CallFacts {
  operationId?: string;
  /** Writes only: how the person's yes was given, or that none was needed. */
  confirmation?: ConfirmationPath;
  /** done, refused, unknown, declined, preview, repeated (an idempotency key's earlier answer), asked (a 2026-07-28 question), failed (a read). */
  outcome: string;
}

export interface CallTelemetry {
  settled(facts: CallFacts): void;
}

/** What the guardrails need, fixed for a server's life. The store is opened on the first write. */
export interface Guard {
  server: string;
  settings: Guardrails | undefined;
  store(): GuardStore;
  now(): number;
}

/** What every stage may use, fixed for a server's life. */
export interface CallDeps {
  domain: string;
  configResult: ConfigResult;
  /** Undefined when the server is not configured (every call answers with why). */
  client: ApiClient | undefined;
  confirmations: Confirmations;
  log: Logger;
  catalog(): Promise<Domain>;
  /** The policy: does this operation need a person's yes? */
  gated(op: { id: string; risk: Risk }): boolean;
  /** The owner's guardrails and the store that keeps their state. */
  guard: Guard;
  /** The server is stopping (a stdio server told to stop): a write not yet claimed is not sent, whatever it was granted before. */
  stopping?(): boolean;
}
