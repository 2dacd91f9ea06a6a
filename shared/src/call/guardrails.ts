// The guardrails a tenant owner sets, hooked into the stages of a write (tool-call.ts, stages.ts):
// idempotency keys and quiet hours before the confirm stage, the send caps shown in the
// confirmation and counted atomically at the claim stage, and the audit line once the call has
// its answer. Reads never come here, so they never touch the store.
import { createHmac } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { LookupReader, Operation, Params, PreviewReader } from '../model/types.js';
import { paramsDigest, summarizeParams, type AuditEntry, type ConfirmationPath } from './audit.js';
import type { CallDeps, Caller, Guard, Reply, ToolCall } from './context.js';
import type { IdempotencyRecord, PendingAudit } from './guard-store.js';
import {
  dailyCapRefused,
  firstOutcomeRepeated,
  idempotencyKeyReused,
  idempotentWriteUnsettled,
  messageCountUnknown,
  quietHoursRefused,
  recipientsCapRefused,
  type LimitState,
} from './outcomes.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** How long an idempotency key holds its first answer. */
export const IDEMPOTENCY_TTL_MS = DAY_MS;
/** How long a repeat waits for the first call with its key to finish before saying it is still on its way. */
const UNSETTLED_WAIT_MS = 5_000;

/** What a write holds once claimed, given back if it turns out nothing was done. */
export interface Holdings {
  idempotencyKey?: string;
  counted?: { counter: string; amount: number };
  /** The answer is an earlier call's, repeated for its idempotency key: this call sent nothing. */
  repeated?: boolean;
  /** The write's shared mark, once claimed: a store that appended its audit line in the settle's step says so there. */
  mark?: { audited?: boolean };
}

const MINUTE_MS = 60 * 1000;
/** One formatter per time zone (the owner's: one or two), made once: making one costs more than using it. */
const localFormats = new Map<string, Intl.DateTimeFormat>();

function localParts(now: number, timeZone: string): { date: string; hour: string; minute: string } {
  let format = localFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    localFormats.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(now)).map((part) => [part.type, part.value]));
  return { date: `${parts.year}-${parts.month}-${parts.day}`, hour: parts.hour as string, minute: parts.minute as string };
}

/** The local clock in the owner's time zone: minutes after midnight, HH:MM, and the date the daily cap counts. */
export function localClock(now: number, timeZone: string): { minutes: number; text: string; date: string } {
  const { date, hour, minute } = localParts(now, timeZone);
  return { minutes: Number(hour) * 60 + Number(minute), text: `${hour}:${minute}`, date };
}

/** The first whole minute after `from`, up to `to`, at which `reached` holds (it holds at `to`, and from its first minute on). */
function firstMinute(from: number, to: number, reached: (at: number) => boolean): number {
  let [low, high] = [Math.floor(from / MINUTE_MS), Math.ceil(to / MINUTE_MS)];
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (reached(middle * MINUTE_MS)) high = middle;
    else low = middle;
  }
  return high * MINUTE_MS;
}

/**
 * When the next local day begins, as its local date and time: read from the zone, since a day may
 * not begin at 00:00 (Chile's clocks go from 24:00 to 01:00) or may be skipped (Samoa went from
 * 2011-12-29 to 2011-12-31).
 */
export function nextDayBegins(now: number, timeZone: string): string {
  const today = localParts(now, timeZone).date;
  const at = firstMinute(now, now + 2 * DAY_MS, (minute) => localParts(minute, timeZone).date > today);
  const { date, hour, minute } = localParts(at, timeZone);
  return `${date} ${hour}:${minute}`;
}

/**
 * The local time at which the quiet hours that `now` is inside end: the window's end, or where
 * that time does not occur that night (the hour the clocks skip), the time the clocks show once
 * it has passed.
 */
function quietHoursEnd(now: number, timeZone: string, window: { start: number; end: number }): string {
  let to = now;
  for (let tries = 0; tries < 3; tries++) {
    // The end as the clock reads now, a whole day on at most; a clock that went back on the way is read on from there.
    to += ((((window.end - localClock(to, timeZone).minutes) % 1440) + 1440) % 1440 || 1440) * MINUTE_MS;
    if (!insideWindow(localClock(to, timeZone).minutes, window)) {
      const at = firstMinute(now, to, (minute) => !insideWindow(localClock(minute, timeZone).minutes, window));
      return localClock(at, timeZone).text;
    }
  }
  return formatMinutes(window.end);
}

function insideWindow(minutes: number, { start, end }: { start: number; end: number }): boolean {
  return start < end ? minutes >= start && minutes < end : minutes >= start || minutes < end;
}

const formatMinutes = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

const sendsMessages = (op: Operation, params: Params) => op.messages !== undefined && (op.sendsMessage?.(params) ?? true);
const dailyCounter = (keyId: string, date: string) => `messages:${keyId}:${date}`;

/**
 * The idempotency key as the store and the audit record keep it: a keyed digest (HMAC with the
 * store's secret), never the model's text, which may be anything a model wrote.
 */
export function idempotencyKeyDigest(secret: Uint8Array, idempotencyKey: string): string {
  return createHmac('sha256', secret).update(`engage-mcp idempotency key\n${idempotencyKey}`).digest('base64url').slice(0, 32);
}

/** The store's name for this call's idempotency key: per tenant key, by digest. */
async function idempotencyKeyOf(guard: Guard, call: ToolCall): Promise<string | undefined> {
  const { idempotencyKey } = call.args;
  if (idempotencyKey === undefined) return undefined;
  return `${call.caller.keyId}:${idempotencyKeyDigest(await guard.store().auditSecret(), idempotencyKey)}`;
}

/** Where each guardrail that applies to this write stands now; undefined when none does. */
export async function limitState(
  guard: Guard,
  call: ToolCall,
  op: Operation,
  params: Params,
  countMessages: () => Promise<number | undefined>,
): Promise<LimitState | undefined> {
  const settings = guard.settings;
  if (!settings || !sendsMessages(op, params)) return undefined;
  const { recipientsPerSend, messagesPerDay, quietHours, timeZone } = settings;
  if (recipientsPerSend === undefined && messagesPerDay === undefined && !quietHours) return undefined;
  const now = guard.now();
  const clock = localClock(now, timeZone);
  const state: LimitState = { timeZone, localTime: clock.text };
  // Counted only when a cap needs it: without caps, a preview reads nothing more than before.
  const messages = recipientsPerSend !== undefined || messagesPerDay !== undefined ? await countMessages() : undefined;
  if (quietHours) {
    const inside = insideWindow(clock.minutes, quietHours);
    const endsAt = inside ? quietHoursEnd(now, timeZone, quietHours) : formatMinutes(quietHours.end);
    const override = call.args.quietHoursOverride === true;
    state.quietHours = { window: quietHours.text, inside, endsAt, override, overridden: inside && override };
  }
  if (recipientsPerSend !== undefined) state.perSend = { cap: recipientsPerSend, recipients: messages };
  if (messagesPerDay !== undefined) {
    const used = await guard.store().count(dailyCounter(call.caller.keyId, clock.date));
    state.daily = { cap: messagesPerDay, used, adding: messages, resetsAt: nextDayBegins(now, timeZone) };
  }
  return state;
}

/** How many messages this write sends, as the catalog counts them; undefined when the look-up failed. */
export async function messageCount(op: Operation, params: Params, read: PreviewReader): Promise<number | undefined> {
  const count = await op.messages?.(params, read).catch(() => undefined);
  return typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : undefined;
}

/**
 * Before the confirm stage: a store that cannot be trusted refuses the write, a key used before
 * answers its first outcome (or is refused with other params), and a send inside the quiet hours
 * is refused unless the call overrides them.
 */
export async function beforeConfirm(guard: Guard, call: ToolCall, op: Operation, params: Params, held: Holdings): Promise<Reply | undefined> {
  await guard.store().ready?.();
  const key = await idempotencyKeyOf(guard, call);
  if (key !== undefined) {
    const record = await guard.store().lookup(key);
    if (record) return answerFromRecord(guard, key, record, op, params, held);
  }
  return quietHoursRefusal(guard, call, op, params);
}

/** Whose settings the guardrails are: the server's own environment (stdio), or remote mode's operator's (the key came with the request). */
const keySourceOf = (call: ToolCall) => (call.caller.credentials ? 'request' : 'environment');

/**
 * A send inside the quiet hours without quietHoursOverride is refused: checked before the question
 * and again at the claim, since a person may say yes after the quiet hours have begun.
 */
function quietHoursRefusal(guard: Guard, call: ToolCall, op: Operation, params: Params): Reply | undefined {
  const settings = guard.settings;
  const quietHours = settings?.quietHours;
  if (!settings || !quietHours || !sendsMessages(op, params) || call.args.quietHoursOverride === true) return undefined;
  const now = guard.now();
  const clock = localClock(now, settings.timeZone);
  if (!insideWindow(clock.minutes, quietHours)) return undefined;
  const endsAt = quietHoursEnd(now, settings.timeZone, quietHours);
  const window = { window: quietHours.text, inside: true, endsAt, override: false, overridden: false };
  return quietHoursRefused(op, { timeZone: settings.timeZone, localTime: clock.text, quietHours: window }, keySourceOf(call));
}

/** The answer for a key already used: its first outcome (waited for a moment if still on its way), or a refusal for other params. */
async function answerFromRecord(guard: Guard, key: string, record: IdempotencyRecord, op: Operation, params: Params, held: Holdings): Promise<Reply> {
  const secret = await guard.store().auditSecret();
  if (record.operationId !== op.id || record.digest !== paramsDigest(secret, op.id, params)) return idempotencyKeyReused(op, record);
  held.repeated = true;
  let current: IdempotencyRecord | undefined = record;
  for (let waited = 0; current && !current.reply && !current.stopped && waited < UNSETTLED_WAIT_MS; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    current = await guard.store().lookup(key);
  }
  if (!current) return idempotentWriteUnsettled(op, record); // forgotten meanwhile: that attempt did nothing, but this call was not confirmed for a new one
  return current.reply ? firstOutcomeRepeated(current.reply, current) : idempotentWriteUnsettled(op, current);
}

/**
 * The claim stage's guardrails, right before the send: the quiet hours checked again (the yes may
 * have come after they began), the idempotency key reserved for this write, then the caps
 * checked and counted in one atomic step of the store, so racing sends cannot pass a cap together.
 */
export async function claimGuardrails(
  deps: CallDeps,
  call: ToolCall,
  op: Operation,
  params: Params,
  read: PreviewReader,
  held: Holdings,
): Promise<Reply | undefined> {
  const { guard } = deps;
  const quiet = quietHoursRefusal(guard, call, op, params);
  if (quiet) return quiet;
  const key = await idempotencyKeyOf(guard, call);
  if (key !== undefined) {
    const record: IdempotencyRecord = { operationId: op.id, digest: paramsDigest(await guard.store().auditSecret(), op.id, params), at: guard.now() };
    const holder = await guard.store().reserve(key, record, guard.now() + IDEMPOTENCY_TTL_MS);
    if (holder) return answerFromRecord(guard, key, holder, op, params, held);
    held.idempotencyKey = key;
  }
  const settings = guard.settings;
  if (!settings || !sendsMessages(op, params) || (settings.recipientsPerSend === undefined && settings.messagesPerDay === undefined)) return undefined;
  const messages = await messageCount(op, params, read);
  if (messages === undefined) {
    // A key the API refused (401) would be refused for the write too: said as that, never "try again in a moment".
    const { keyRefused } = read as LookupReader;
    if (keyRefused) throw keyRefused;
    return messageCountUnknown(op);
  }
  if (settings.recipientsPerSend !== undefined && messages > settings.recipientsPerSend)
    return recipientsCapRefused(op, messages, settings.recipientsPerSend, keySourceOf(call));
  if (settings.messagesPerDay === undefined) return undefined;
  const now = guard.now();
  const clock = localClock(now, settings.timeZone);
  const counter = dailyCounter(call.caller.keyId, clock.date);
  const taken = await guard.store().take(counter, messages, settings.messagesPerDay, now + DAY_MS + 2 * 60 * 60 * 1000);
  if (!taken.taken) {
    const daily = { cap: settings.messagesPerDay, used: taken.count, adding: messages, resetsAt: nextDayBegins(now, settings.timeZone) };
    return dailyCapRefused(op, messages, { timeZone: settings.timeZone, localTime: clock.text, daily }, keySourceOf(call));
  }
  held.counted = { counter, amount: messages };
  return undefined;
}

/** What the call's answer says happened to the write. */
export function outcomeOf(reply: Reply): string | undefined {
  if ('resultType' in reply && reply.resultType === 'input_required') return undefined;
  const outcome = ((reply as CallToolResult).structuredContent as { outcome?: unknown } | undefined)?.outcome;
  return typeof outcome === 'string' ? outcome : (reply as CallToolResult).isError ? 'refused' : 'done';
}

export interface WriteTrace {
  op: Operation;
  params: Params;
  confirmation: ConfirmationPath;
  apiStatus?: number;
  held: Holdings;
}

/**
 * After the answer: a write that was not carried out gives back what it held (its count, its
 * key), a write that was (or may have been) keeps its key's first answer, and every write that
 * reached an end (not a preview or a question) gets its audit line.
 */
export async function afterWrite(deps: CallDeps, call: ToolCall, trace: WriteTrace, reply: Reply): Promise<void> {
  const answered = outcomeOf(reply);
  if (answered === undefined || answered === 'preview') return;
  const outcome = trace.held.repeated ? 'repeated' : answered;
  const { guard } = deps;
  const store = guard.store();
  const { held } = trace;
  if (outcome === 'refused' || outcome === 'declined') await releaseHoldings(guard, held);
  else if (held.idempotencyKey) await store.settle(held.idempotencyKey, reply as CallToolResult);
  if (held.mark?.audited) return;
  const entry: AuditEntry = {
    ...(await pendingAudit(deps, call, trace.op, trace.params, trace.confirmation)),
    outcome,
    ...(trace.apiStatus !== undefined ? { apiStatus: trace.apiStatus } : {}),
  };
  await store.appendAudit(entry);
}

/**
 * The write's audit line but for how it ended (its outcome, the API's status), dated now: the
 * claim keeps it with the write's mark (a server that stops with the write at the API leaves it
 * for another to append), and afterWrite completes it.
 */
export async function pendingAudit(deps: CallDeps, call: ToolCall, op: Operation, params: Params, confirmation: ConfirmationPath): Promise<PendingAudit> {
  const { guard } = deps;
  const secret = await guard.store().auditSecret();
  return {
    time: new Date(guard.now()).toISOString(),
    key: call.caller.keyId.slice(0, 16),
    ...(call.client ? { client: clientAsKept(call.client, call.caller.redact) } : {}),
    server: guard.server,
    operationId: op.id,
    paramsDigest: paramsDigest(secret, op.id, params),
    params: summarizeParams(params, pathFieldsOf(op), catalogFieldsOf(op)),
    confirmation,
    ...(call.args.idempotencyKey !== undefined ? { idempotencyKeyDigest: idempotencyKeyDigest(secret, call.args.idempotencyKey) } : {}),
  };
}

/** Gives back what a write held, once it is known nothing was done: its count, and its idempotency key (a repeat may run). */
export async function releaseHoldings(guard: Guard, held: Holdings): Promise<void> {
  const { counted, idempotencyKey } = held;
  delete held.counted;
  delete held.idempotencyKey;
  try {
    if (counted) await guard.store().giveBack(counted.counter, counted.amount);
  } finally {
    // Even when the count was not given back: a key left held would answer "unknown" for a write never sent.
    if (idempotencyKey) await guard.store().settle(idempotencyKey, undefined);
  }
}

/** The host's name and version as the record keeps them: a host that names itself with the key (misconfigured, or a remote caller's choice) must not put the key in the record, which keeps only its fingerprint. */
function clientAsKept(client: NonNullable<ToolCall['client']>, redact: Caller['redact']): NonNullable<AuditEntry['client']> {
  return {
    ...(client.name !== undefined ? { name: redact(client.name) } : {}),
    ...(client.version !== undefined ? { version: redact(client.version) } : {}),
  };
}

/** The operation's own field names: one that passes unknown fields on takes any name the model gives, which the record only counts. */
function catalogFieldsOf(op: Operation): string[] {
  return Object.keys((op.params.def as { shape?: Record<string, unknown> }).shape ?? {});
}

function pathFieldsOf(op: Operation): string[] {
  return [...op.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
}
