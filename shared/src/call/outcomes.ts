// How a call ended, and every text the model is told about it, in one place: what happened, what
// is known of a write (carried out, refused, unknown), and what to do next. Never the key, an
// HTML page or a stack trace; a write whose outcome is unknown is never called refused.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { InputError, UpstreamError } from '../model/errors.js';
import type { CallStage, Operation, Outcome } from '../model/types.js';
import { CUSTOMER_TEXT_NOTICE, fitData, type Scrub } from '../safe/render.js';
import { quotedText } from '../safe/sanitize.js';
import { GuardStateError } from './guard-store.js';
import type { Attempt } from './journal.js';
import { PREVIEW_TEXT_NOTICE, type Statement } from './statement.js';

export type { CallStage, Outcome };
export const OUTCOMES: readonly Outcome[] = ['done', 'preview', 'declined', 'refused', 'unknown'];

/**
 * The read that shows what a write did, as a clause: "check with X", or where this connection's
 * OAuth grant lacks X's scope, the user checks (and the scope that would let the model is named),
 * or "check the current state".
 */
function checkWhat(op: Operation | undefined): string {
  if (op?.verifyWith) return `check with ${op.verifyWith}`;
  const needs = op?.notGranted?.verifyWith;
  if (needs) return `ask the user to check the current state (${needs.operation} would show it, but ${notGrantedHere(needs.scope)})`;
  return 'check the current state';
}

/** A clause that starts a sentence. */
const capital = (clause: string) => `${clause[0]!.toUpperCase()}${clause.slice(1)}`;

/** Why a read an answer could name is not the model's to call: the scope it needs, and how the user grants it. */
export const notGrantedHere = (scope: string) =>
  `it needs the API scope ${scope}, which was not granted to this connection; the user can reconnect this server and tick that permission to let you`;

/** Where to see a write's result, as a sentence after what happened; nothing where no read shows it. */
function seeResult(op: Operation): string {
  if (op.verifyWith) return ` See the result with ${op.verifyWith}.`;
  return op.notGranted?.verifyWith ? ` To see the result, ${checkWhat(op)}.` : '';
}

/** An OAuth connection whose grant lacks the operation's scope: nothing was sent. */
export function notGranted(op: Operation, scope = op.scope, why = ''): string {
  return (
    `${op.id}${why} needs the API scope ${scope}, which was not granted to this connection, so nothing was sent. ` +
    'Tell the user: to allow it, reconnect this server and tick that permission on the consent page.'
  );
}

const at = (time: number) => new Date(time).toISOString();
/** Who sent an earlier attempt: this server, or where it was read from a shared store, whichever of those it shares it with. */
const sender = (earlier: Attempt) => earlier.by ?? 'this server';
const howItEnded = (earlier: Attempt) => (earlier.outcome === 'done' ? 'it was carried out' : 'its outcome is unknown (it may have been carried out)');

export function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function writeFailure(op: Operation, outcome: Outcome, text: string): CallToolResult {
  return { ...failure(text), structuredContent: { operationId: op.id, outcome } };
}

export function notConfigured(domain: string, problems: readonly string[]): CallToolResult {
  return failure(
    `The ${domain} server is not configured, so nothing was sent: ${problems.join(' ')} Retrying will not help: tell the user, who fixes the server's environment in the host's MCP configuration and restarts it.`,
  );
}

export function serverStopping(): CallToolResult {
  return failure(
    'This server is stopping (its host closed it or told it to stop), so it takes no new write: nothing was sent. Ask again once the host has started it again.',
  );
}

/** Why a server stops: a stdio server's host, or a remote replica's restart (its drain). */
const STOPPING_WHY = 'its host closed it or told it to stop, or, in remote mode, this replica is being restarted';
const ASK_AGAIN_AFTER_STOP = 'Ask again once its host has started it again (in remote mode, in a moment: another replica answers).';

/** A write taken before its server began stopping, not yet sent (its preview being read, its person asked): it is not sent, nor asked about, now. */
export function stoppedBeforeSend(op: Operation): CallToolResult {
  return writeFailure(op, 'refused', `This server began stopping (${STOPPING_WHY}) before ${op.id} went out, so nothing was sent. ${ASK_AGAIN_AFTER_STOP}`);
}

/**
 * A write claimed before its server began stopping, not yet at the API when it did (waiting out a
 * 429's Retry-After, whose refusal carried nothing out, or its turn): not sent, nothing carried out.
 */
export function stoppedWhileWaiting(op: Operation): CallToolResult {
  return writeFailure(
    op,
    'refused',
    `This server began stopping (${STOPPING_WHY}) while ${op.id} waited to be sent (after the API's rate limit, or for its turn), so it was not sent and nothing was carried out. ${ASK_AGAIN_AFTER_STOP}`,
  );
}

export function noKey(): CallToolResult {
  return failure('No API key came with this request, so nothing was sent: send the tenant key as Authorization: Bearer <key> or X-API-Key.');
}

/** The API carried the write out. If showing its answer fails, that is still said: not "failed", not "nothing is known". */
export function carriedOut(op: Operation, data: unknown, scrub: Scrub, earlierSent?: Attempt): CallToolResult {
  let fitted: { data: unknown; notes: string[] };
  try {
    fitted = fitData(data, { scrub });
  } catch {
    fitted = { data: null, notes: [`The API's answer could not be shown (the server failed to process it).${seeResult(op)}`] };
  }
  // The record handed back may hold what customers or third parties wrote, as its reads do.
  const notes = [
    ...(op.afterDone ? [op.afterDone] : []),
    ...(earlierSent ? [sentTwice(op, earlierSent, true)] : []),
    ...(op.customerText ? [CUSTOMER_TEXT_NOTICE] : []),
    ...fitted.notes,
  ];
  const text = [`Done: ${op.id} was carried out.`, ...notes, JSON.stringify(fitted.data ?? null)].join('\n');
  return {
    content: [{ type: 'text', text }],
    structuredContent: { operationId: op.id, outcome: 'done', data: fitted.data ?? null, ...(notes.length ? { notes } : {}) },
  };
}

/**
 * A write that needs no yes, sent again after an earlier attempt of it (this server's, or another's sharing its state)
 * was carried out or ended unknown; `done`: this one was carried out (otherwise its outcome is unknown too).
 */
function sentTwice(op: Operation, earlier: Attempt, done: boolean): string {
  if (earlier.outcome !== 'done')
    return `Exactly this ${op.id} was also sent by ${sender(earlier)} at ${at(earlier.at)}, and whether that one was carried out is unknown: ${whatMayBeTwice(op)}. ${capital(checkWhat(op))}, and tell the user.`;
  return `Exactly this ${op.id} was also sent by ${sender(earlier)} at ${at(earlier.at)}, and it was carried out: ${done ? whatIsTwice(op) : whatMayBeTwice(op)}. Tell the user.`;
}

/** Twice, as it now is: both were carried out. */
function whatIsTwice(op: Operation): string {
  if (op.messages === undefined) return 'it has now been carried out twice';
  if (op.sendsMessage) return 'it has now been carried out twice, and a message it sends may have reached the customer twice';
  return 'the customer now has it twice';
}

/** What twice means: a send's message reached the customer twice; any other write (a draft, a record) was made twice. */
function whatMayBeTwice(op: Operation): string {
  if (op.messages === undefined) return 'it may now have been carried out twice';
  // A write that sends a message only with some params (a ticket opened with a first message).
  if (op.sendsMessage) return 'it may now have been carried out twice, and a message it sends may have reached the customer twice';
  return 'the customer may now have it twice';
}

/** The answer for a host that cannot ask (or whose question failed): the statement, a fresh token, and what to do with it. */
export function previewAnswer(op: Operation, toolName: string, statement: Statement, reason: string, token: string, expiresAt: string): CallToolResult {
  const instruction = `To run it: show this preview to the user, and only if they agree, call ${toolName} again with the same operationId and params and confirmationToken "${token}". The token works once, for exactly these params, until ${expiresAt}.`;
  const notes = statement.quotesApiText ? [PREVIEW_TEXT_NOTICE] : [];
  const text = [reason, `Confirmation needed: ${op.id} has NOT been run.`, statement.text, ...notes, instruction].filter(Boolean).join('\n\n');
  return {
    content: [{ type: 'text', text }],
    structuredContent: {
      operationId: op.id,
      outcome: 'preview',
      preview: statement.text,
      confirmationToken: token,
      expiresAt,
      ...(notes.length ? { notes } : {}),
    },
  };
}

/** A confirmation is never shown cut (a person would say yes to less than is sent): no token then. */
export function previewTooLarge(operationId: unknown): CallToolResult {
  const text = `The confirmation for ${String(operationId)} is too large to show whole, so it is not offered and nothing was sent. Send shorter text or fewer fields.`;
  return { content: [{ type: 'text', text }], isError: true, structuredContent: { operationId, outcome: 'refused' } };
}

/** The first line of a question or preview put together while exactly this write began going out from another server: its yes sends nothing. */
export function sendingNowWarning(op: Operation, earlier: Attempt): string {
  return `Warning: exactly this ${op.id} is being sent right now by ${sender(earlier)} (since ${at(earlier.at)}), so a yes to this sends nothing. Once that send has ended, ${checkWhat(op)}, and ask again if the user still wants it.`;
}

/** The first line of a question or preview whose read of the store other servers share failed: a send of theirs may be unseen. */
export function notCheckedWarning(op: Operation): string {
  const check = op.verifyWith || op.notGranted?.verifyWith ? ` ${capital(checkWhat(op))} first: if` : ' If';
  return `Warning: whether exactly this ${op.id} was already sent lately by another server sharing this one's state could not be checked (the shared state store did not answer).${check} it was, saying yes now does it again.`;
}

/** The first line of a question or preview when this server already sent exactly this write lately. */
export function sentBeforeWarning(op: Operation, earlier: Attempt): string {
  const check = op.verifyWith || op.notGranted?.verifyWith ? ` ${capital(checkWhat(op))} first:` : '';
  return `Warning: ${sender(earlier)} already sent exactly this ${op.id} at ${at(earlier.at)}, and ${howItEnded(earlier)}.${check} saying yes now does it again.`;
}

/** The host could not ask, or answered in a way that cannot be read (the person may have seen it): true of both. */
export const QUESTION_NOT_SHOWN = 'The confirmation question could not be shown: this host cannot ask it.';

/**
 * A shared store of spent confirmations that did not answer the check: nothing ran, and the store
 * marks that attempt unrun (remote mode's Redis), so the same value, asked again, runs once.
 */
export const CONFIRMATION_NOT_CHECKED =
  'The confirmation could not be checked (the shared store of used confirmations did not answer), so nothing was run. ' +
  'Try again in a few seconds with the same confirmationToken (or requestState).';

export type TokenRefusal = 'unknown' | 'expired' | 'mismatch' | 'spent-mismatch';
const TOKEN_MISMATCH =
  'The confirmationToken was issued for other params, another operation or another quietHoursOverride: nothing was run, and the token is spent.';
export const TOKEN_REFUSALS: Record<TokenRefusal, string> = {
  // A stdio server's tokens hold in the process that issued them: one from before a restart, or from another process of it, is as unknown as a forged one.
  unknown: 'The confirmationToken is not valid (not one this server issued for this key since it started, or altered): nothing was run.',
  expired: 'The confirmationToken has expired: nothing was run.',
  mismatch: TOKEN_MISMATCH,
  'spent-mismatch': TOKEN_MISMATCH,
};

/** Why a person who answered is asked the question again: the answer's requestState could not be taken. Shown to the person, above the question. */
export const ASKED_AGAIN: Record<TokenRefusal, string> = {
  unknown: 'Your earlier answer could not be matched to a question from this server (or it was altered), so nothing was run and you are asked again.',
  expired: 'Your earlier answer came after its question had expired (questions last 10 minutes), so nothing was run and you are asked again.',
  mismatch: 'Your earlier answer was to a question about something else (other params), so nothing was run and you are asked about this one.',
  'spent-mismatch': 'Your earlier answer was to a question about something else (other params), so nothing was run and you are asked about this one.',
};

/**
 * The reason above a new preview when a token's yes was given to facts that read otherwise now;
 * `unread`: a look-up failed as they were read again, so whether they changed is not known.
 */
export function factsChanged(unread: boolean): string {
  const what = unread
    ? 'What the earlier preview showed could not be read again to check it still holds (a look-up failed): '
    : 'What the earlier preview showed has changed since (a record it read reads otherwise now, or could not be read then and can now): ';
  return `${what}nothing was run, and that token is spent. Show the user this preview as it stands now.`;
}

/** A person's yes to a question whose facts read otherwise (or could not be read again) by the time it came back: nothing runs; the next call asks again. */
export function changedSinceAsked(op: Operation, unread: boolean): CallToolResult {
  const what = unread
    ? 'what they were asked about could not be read again to check it still holds (a look-up failed)'
    : 'what they were asked about has changed since (a record the question read reads otherwise now, or could not be read then and can now)';
  const text =
    `The user said yes, but ${what}, so ${op.id} was not run and nothing was changed. ` +
    'Call again with the same operationId and params: the user is asked about it as it stands now.';
  return writeFailure(op, 'refused', text);
}

export function declinedBy(op: Operation, action: string): CallToolResult {
  const text =
    action === 'unread'
      ? `The host's answer to the confirmation question could not be read (or none came in time), so it counts as a no: ${op.id} was not run, and nothing was changed. If the user still wants it, call again with the same operationId and params: they are asked again.`
      : `The user ${action === 'accept' ? 'did not say yes' : action === 'decline' ? 'declined' : 'cancelled'}: ${op.id} was not run, and nothing was changed. Do not retry unless the user asks.`;
  return { content: [{ type: 'text', text }], structuredContent: { operationId: op.id, outcome: 'declined' } };
}

/** A genuine confirmation presented again: final, with no new token and no new question; what is known of its attempt is said. */
export function alreadyUsed(op: Operation, what: 'confirmationToken' | 'requestState', earlier: Attempt | undefined, sent?: Attempt): CallToolResult {
  const used = `This ${what} was already used for exactly this ${op.id}`;
  if (earlier?.outcome === 'refused') {
    // Nothing went out with this one; the same write may have gone out by another, and "nothing was carried out" must not read as "it was not sent".
    const other =
      sent?.outcome === 'done' || sent?.outcome === 'unknown'
        ? ` Exactly this ${op.id} was sent by ${sender(sent)} at ${at(sent.at)} (by another confirmation), and ${howItEnded(sent)}.`
        : '';
    const text = `This ${what} was already used, and nothing was carried out with it (the API refused the write, or it was never sent); nothing was done now.${other} To try again, if the user still wants it, call without it: the user is asked again.`;
    return writeFailure(op, 'refused', text);
  }
  if (earlier?.outcome === 'done') {
    return writeFailure(
      op,
      'done',
      `${used}, and it was carried out at ${at(earlier.at)}; nothing was done now. Do not repeat it unless the user asks for it again.`,
    );
  }
  const check = checkWhat(op);
  return writeFailure(op, 'unknown', `${used}, so it may already have been carried out; nothing was done now. ${capital(check)} before asking the user again.`);
}

/** The same write went out after this yes was given (by another confirmation): nothing is sent again. */
export function sentSince(op: Operation, earlier: Attempt): CallToolResult {
  const check = op.verifyWith || op.notGranted?.verifyWith ? ` ${capital(checkWhat(op))}.` : '';
  const text = `Exactly this ${op.id} was sent by ${sender(earlier)} at ${at(earlier.at)}, after this confirmation was given, and ${howItEnded(earlier)}; nothing was done now.${check} To send it again, call without the confirmation: the user is asked again and told about the earlier send.`;
  return writeFailure(op, 'refused', text);
}

/** The identical write is still on its way: nothing new is sent. */
export function stillRunning(op: Operation, earlier: Attempt): CallToolResult {
  const text = `Exactly this ${op.id} is still being sent by ${sender(earlier)} (since ${at(earlier.at)}), so nothing new was done. Wait for it to finish, then ${checkWhat(op)}.`;
  return writeFailure(op, 'unknown', text);
}

/** Where the call's key came from: the server's environment (stdio), the request (remote mode), or an OAuth grant (remote mode, the key entered on the consent page). */
export type KeySource = 'environment' | 'request' | 'grant';

/** A refused key is the person's to replace: the model is told so, and where the new key goes. */
const KEY_IS_THE_USERS = 'Retrying will not help: tell the user, who can create';
const IN_CONSOLE = 'in the tenant console under API key settings';
/** Where a new key goes: remote mode reads no key of its own, only the one each request brings. */
const NEW_KEY_GOES: Record<KeySource, string> = {
  environment: 'set ENGAGE_API_KEY',
  request: "send it with each request to this service (Authorization: Bearer <key> or X-API-Key), in the host's connector settings",
  // An OAuth connection sends no key of its own: the key is the one entered when it signed in.
  grant: 'sign in to this server again (reconnect it in the host) and enter the new key on the consent page',
};

/**
 * Who fixes the API's address: a stdio server's ENGAGE_BASE_URL is in the user's configuration;
 * in remote mode it is the service's, out of the user's sight, and its operator's to fix.
 */
const ADDRESS_FIXES: Record<Exclude<KeySource, 'grant'>, Record<'unreachable' | 'certificate' | 'redirect', string>> = {
  environment: {
    unreachable: 'check ENGAGE_BASE_URL and the network, then try again',
    certificate: 'check ENGAGE_BASE_URL (retrying will not help)',
    redirect: 'ENGAGE_BASE_URL may point to an old or wrong address: tell the user (retrying will not help while it redirects)',
  },
  request: {
    unreachable:
      "this service could not reach its API: try again later, and if it persists tell the user (this service's operator fixes its address or network)",
    certificate: "retrying will not help: tell the user (this service's operator fixes its API address)",
    redirect: "this service's API address may be old or wrong: tell the user (its operator fixes it; retrying will not help while it redirects)",
  },
};

/** Whose the API's address is: the server's environment, or remote mode's (through a grant or not). */
const addressOf = (keySource: KeySource) => (keySource === 'environment' ? 'environment' : 'request');

/** Who fixes an address whose 404 is not the API's (its path, or what answers in front of it). */
const NO_ROUTE: Record<Exclude<KeySource, 'grant'>, string> = {
  environment: 'ENGAGE_BASE_URL (its path included) may be wrong: tell the user, who checks it (retrying will not help while it answers so)',
  request: "this service's API address may be wrong: tell the user (its operator fixes it; retrying will not help while it answers so)",
};

/**
 * The answer for a call that failed at `stage`; a write's answer says what is known of it.
 * `byToken`: the write ran on a confirmationToken's yes, which is spent now.
 */
export function failedCall(
  error: unknown,
  op: Operation | undefined,
  stage: CallStage,
  isWrite: boolean,
  keySource: KeySource = 'environment',
  byToken = false,
  earlier?: Attempt,
): CallToolResult {
  const outcome = outcomeOfFailure(error, stage);
  // A refusal of a write this server sent before (done, or of unknown outcome) may be the API's answer to that one: said so.
  const sentBefore = op && isWrite && outcome === 'refused' && (earlier?.outcome === 'done' || earlier?.outcome === 'unknown') ? earlier : undefined;
  const described = describeFailure(error, op, stage, keySource, sentBefore);
  // A repeat of a write whose earlier attempt ended unknown, itself of unknown outcome: both may have gone out.
  const text =
    op && isWrite && outcome === 'unknown' && (earlier?.outcome === 'done' || earlier?.outcome === 'unknown')
      ? `${described} ${sentTwice(op, earlier, false)}`
      : described;
  if (!op || !isWrite) return failure(text);
  // "Try again" would be read as the same call, token and all: one more refusal before a new preview.
  const passing = error instanceof UpstreamError ? ['rate-limited', 'unreachable', 'timeout', 'network'].includes(error.kind) : !(error instanceof InputError);
  const tryAgain = byToken && outcome === 'refused' && passing;
  return writeFailure(op, outcome, tryAgain ? `${text} ${TOKEN_SPENT}` : text);
}

/** What a retry needs once a confirmationToken's yes was spent on a write that was not sent: the same token is refused as used. */
const TOKEN_SPENT = 'The confirmationToken is spent: to try again, call without it (the user is shown a new preview).';

/**
 * A refusal at the claim stage (a guardrail) of a write whose yes came as a confirmationToken:
 * the token is spent by then, so its "try again" and "call again" mean a call without it; said so.
 */
export function refusedAfterToken<R extends object>(reply: R): R {
  // A question (an input_required round) has no text of ours to add to.
  if ('resultType' in reply && reply.resultType === 'input_required') return reply;
  const result = reply as unknown as CallToolResult;
  if ((result.structuredContent as { outcome?: unknown } | undefined)?.outcome !== 'refused') return reply;
  const [first, ...rest] = result.content;
  if (first?.type !== 'text') return reply;
  return { ...result, content: [{ ...first, text: `${first.text} ${TOKEN_SPENT}` }, ...rest] } as unknown as R;
}

/** What is known of a write that ended in an error. */
export function outcomeOfFailure(error: unknown, stage: CallStage): Extract<Outcome, 'done' | 'unknown' | 'refused'> {
  if (stage === 'answered') return 'done';
  if (stage === 'before' || error instanceof InputError) return 'refused';
  return error instanceof UpstreamError && error.details.mayHaveHappened !== true ? 'refused' : 'unknown';
}

/**
 * The text a model gets for a failed call of `op`. `stage` says how far the call got, so that the
 * server's own failure after a write was sent is not reported as if nothing had happened.
 */
export function describeFailure(
  error: unknown,
  op: Operation | undefined,
  stage: CallStage = 'before',
  keySource: KeySource = 'environment',
  sentBefore?: Attempt,
): string {
  const text = describeFailureOnly(error, op, stage, keySource, sentBefore !== undefined);
  if (!sentBefore || !op) return text;
  return `${text} Exactly this ${op.id} was sent by ${sender(sentBefore)} at ${at(sentBefore.at)}, and ${howItEnded(sentBefore)}: the API's answer may reflect that earlier send. ${capital(checkWhat(op))} before anything else.`;
}

function describeFailureOnly(error: unknown, op: Operation | undefined, stage: CallStage, keySource: KeySource, sentBefore: boolean): string {
  if (error instanceof InputError) return error.message;
  if (error instanceof GuardStateError && stage === 'before') return guardStateRefused(error, op);
  if (!(error instanceof UpstreamError)) return describeInternalFailure(op, stage);
  const { status, apiMessage, mayHaveHappened } = error.details;
  const name = op?.id ?? 'the operation';
  // A write the API refused: said so, so the model never wonders whether it happened. A read changes nothing anyway.
  const unchanged =
    op && op.risk !== 'safe' ? (sentBefore ? ` This attempt of ${op.id} changed nothing.` : ` ${op.id} was not carried out; nothing was changed.`) : '';
  switch (error.kind) {
    case 'auth':
      return `The API refused the key (HTTP 401): it is invalid, revoked or expired.${unchanged} ${KEY_IS_THE_USERS} a new key ${IN_CONSOLE} and ${NEW_KEY_GOES[keySource]}.`;
    case 'scope':
      return `The key lacks the permission ${op?.scope ?? 'this operation needs'} that ${name} needs (HTTP 403).${unchanged} ${KEY_IS_THE_USERS} a key with that scope ${IN_CONSOLE} and ${NEW_KEY_GOES[keySource]}.`;
    case 'not-found':
      return notFound(error, op, keySource, sentBefore, unchanged);
    case 'rejected':
      return `The API rejected ${name} (HTTP ${status})${apiMessage ? `: ${quotedText(apiMessage)}` : ''}.${unchanged} ${nextAfterRejection(status, op)}`;
    case 'rate-limited':
      return rateLimited(error, name);
    case 'unreachable':
      return `${error.message}. Nothing was sent; ${ADDRESS_FIXES[addressOf(keySource)].unreachable}.`;
    case 'certificate':
      return `${error.message}, so the connection was refused before anything, the key included, was sent. Nothing was sent; ${ADDRESS_FIXES[addressOf(keySource)].certificate}.`;
    case 'cancelled':
      return mayHaveHappened ? unknownOutcome(`The call was cancelled while ${name} was in flight`, op) : `The call was cancelled; ${name} was not sent.`;
    case 'redirect':
      return redirected(error, op, keySource);
    case 'bad-response':
    case 'server':
    case 'network':
    case 'timeout':
      return brokenExchange(error, op, name);
  }
}

/** A 404: the API's "no such record", a read that names none, or an address that is not the API's. */
function notFound(error: UpstreamError, op: Operation | undefined, keySource: KeySource, sentBefore: boolean, unchanged: string): string {
  const { apiMessage } = error.details;
  if (error.details.notApiBody)
    return `The API's address answered HTTP 404 (its body: ${error.details.notApiBody}), not the API's answer: the request reached no route of the API, so this is not a missing record and other ids will not help.${unchanged} ${NO_ROUTE[addressOf(keySource)]}.`;
  // A read that names no record (no id in its path) cannot miss one: the API has nothing of the
  // kind for this tenant (no subscription, say: its message tells), or no such route at this address.
  if (op && op.risk === 'safe' && !op.path.includes('{'))
    return `Not found (HTTP 404)${apiMessage ? `: ${quotedText(apiMessage)}` : ''}. ${op.id} names no record (it takes no id), so no other params or ids will help: either the API holds nothing of this kind for the tenant (tell the user what its message says), or it has no such route at this address; then ${NO_ROUTE[addressOf(keySource)]}.`;
  // A write that takes no id (a create, a send) misses no record by id: something its params name, or the route.
  if (op && !op.path.includes('{') && !sentBefore)
    return `Not found (HTTP 404)${apiMessage ? `: ${quotedText(apiMessage)}` : ''}.${unchanged} ${op.id} takes no id, so no other id will help: either the API found nothing for a value in its params (its message may say which: correct it, or tell the user), or it has no such route at this address; then ${NO_ROUTE[addressOf(keySource)]}.`;
  // Sent before: the id was likely right, and that send what removed the record.
  const hint = sentBefore ? '' : findIds(op);
  return `Not found (HTTP 404)${apiMessage ? `: ${quotedText(apiMessage)}` : ''}.${unchanged}${hint}`;
}

/** Held back by the API's rate limit (its 429) or by this server's pacing: when to try again. */
function rateLimited(error: UpstreamError, name: string): string {
  const { status, retryAfterSeconds } = error.details;
  const seconds = retryAfterSeconds ?? 60;
  const again = `Try again in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`;
  // No status: this server's pacing held the call back (the key's bucket read empty), so nothing reached the API.
  return status === 429
    ? `The API's rate limit is exhausted (HTTP 429); ${name} was not carried out. ${again}`
    : `The API's rate limit for this key is used up, so this server held ${name} back: it was not sent. ${again}`;
}

/**
 * Not a passing fault: the address answers from elsewhere, and the key is not taken there. A write
 * that may have been received is unknown, and the address is still what to fix: the read that checks it is redirected too.
 */
function redirected(error: UpstreamError, op: Operation | undefined, keySource: KeySource): string {
  const fix = ADDRESS_FIXES[addressOf(keySource)].redirect;
  return error.details.mayHaveHappened ? `${unknownOutcome(error.message, op)} ${capital(fix)}.` : `${error.message}. Nothing was read; ${fix}.`;
}

/** The exchange broke (a bad answer, the API's failure, the connection, the deadline): what is known of a write, and whether to try again. */
function brokenExchange(error: UpstreamError, op: Operation | undefined, name: string): string {
  if (error.details.mayHaveHappened) return unknownOutcome(error.message, op);
  // A write that never reached a socket did not happen: said so, as its outcome (refused) says.
  const notSent = op && op.risk !== 'safe' ? ` Nothing reached the API: ${op.id} was not carried out.` : '';
  // An answer too large to read is as large the next time: "try again later" would only repeat it.
  if (error.details.lasting)
    return `${error.message}.${notSent} Retrying will not help: tell the user (the API holds more for ${name} than this server reads at once).`;
  return `${error.message}.${notSent} Try again later.`;
}

/**
 * What to do after a 4xx other than 401, 403, 404 and 429. A 402 or 409 (a record's state, a duplicate) is no fault of the request:
 * "correct it" would send the model fiddling with params, where the person must be told.
 */
function nextAfterRejection(status: number | undefined, op: Operation | undefined): string {
  if (status === 402) return "The tenant's quota or plan does not allow it, not the request: tell the user; retrying will not help until that changes.";
  if (status === 409)
    return `What the API holds now conflicts with it (the request's form is fine): ${checkWhat(op)} and tell the user rather than retrying as is.`;
  // The method, the body's type or framing: the request's form is this server's, not the params'; no correction of them helps.
  if (status === 405 || status === 406 || status === 411 || status === 415)
    return "The request's form is this server's, not something in the params: changing them or retrying will not help; tell the user (this server and the API disagree on how it is called).";
  if (status === 413 || status === 414) return 'The request is too large for the API: send less (shorter text, fewer records or fields), not the same again.';
  return 'Correct the request before trying again.';
}

/** The guardrails' own state cannot be trusted: the owner must fix it (the store says what and how); reads are unaffected. */
function guardStateRefused(error: GuardStateError, op: Operation | undefined): string {
  return `Refused by a guardrail: ${error.message}. Nothing was sent; ${op?.id ?? 'the write'} can be asked again once that is fixed (reads still work).`;
}

function describeInternalFailure(op: Operation | undefined, stage: CallStage): string {
  if (op && op.risk !== 'safe' && stage === 'answered') {
    const check = op.verifyWith ? `; see the result with ${op.verifyWith}` : op.notGranted?.verifyWith ? `; to see the result, ${checkWhat(op)}` : '';
    return `The API answered that ${op.id} was carried out, but the MCP server failed while preparing its answer (the details are in the server log)${check}. Do not repeat it.`;
  }
  if (op && op.risk !== 'safe' && stage === 'sent') return unknownOutcome('Internal error in the MCP server while the request was in flight', op);
  // Before the claim let it go, a write was never sent: that much is known, and said.
  if (op && op.risk !== 'safe' && stage === 'before')
    return `Internal error in the MCP server before ${op.id} was sent (the details are in the server log): ${op.id} was not sent; nothing was changed. Try again in a moment; if it fails the same way, tell the user.`;
  return 'Internal error in the MCP server; nothing more is known. The details are in the server log.';
}

/**
 * After a 404: the list that shows valid ids, where this caller can call it; else the user gives the
 * id; else (no list names such values, or this server leaves it out) the path's values are named to check.
 */
function findIds(op: Operation | undefined): string {
  if (op?.findIdsWith) return ` Use ${op.findIdsWith} to find valid ids.`;
  const needs = op?.notGranted?.findIdsWith;
  if (needs) return ` Ask the user for the right id (${needs.operation} would list valid ids, but ${notGrantedHere(needs.scope)}).`;
  const named = op ? pathValues(op) : [];
  if (named.length === 0) return '';
  const values = named.length > 1 ? 'values given in' : 'value given in';
  return ` The API has nothing for the ${values} ${named.join(' and ')}: check ${named.length > 1 ? 'them' : 'it'}, or ask the user for the right value (the same call again will not help).`;
}

/**
 * The params an operation's path takes, each with what it holds (`params.status (ticket status, e.g. open)`).
 * A description's closing parenthesis names the list its values come from (`campaign id (campaign.list)`):
 * left out, as that list is not one this caller can call when this is said.
 */
function pathValues(op: Operation): string[] {
  const shape = (op.params as { shape?: Record<string, { description?: string }> }).shape ?? {};
  return [...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => {
    const description = shape[name!]?.description?.replace(/\s*\([^()]*\)$/, '');
    return `params.${name}${description && description !== name ? ` (${description})` : ''}`;
  });
}

function unknownOutcome(what: string, op: Operation | undefined): string {
  return `${what}. The outcome is unknown: ${op?.id ?? 'the operation'} may have been carried out, so it was not repeated; ${checkWhat(op)} before trying again.`;
}

// The guardrails a tenant owner sets (call/guardrails.ts). A refusal says which limit, where it
// stands, when it resets, and how the owner changes it; nothing is sent.

/**
 * Who changes a guardrail, as a clause: a stdio server's owner, in its MCP configuration; in remote
 * mode the service's operator, whose settings hold for every tenant (a connector has no env block).
 */
function whoChanges(setting: string, action: string, keySource: KeySource): string {
  return keySource !== 'environment'
    ? `${setting} is set by this service's operator for every tenant it serves: tell the user, who can ask the operator if it should change`
    : `the tenant owner ${action} by changing ${setting} in the server's environment (the env block of the MCP configuration) and restarting it`;
}

/** Where a guardrail stands, in a person's words, for the confirmation and for a refusal. */
export interface LimitState {
  timeZone: string;
  localTime: string;
  /** `override`: the call says quietHoursOverride; `overridden`: it does, and the send is inside the quiet hours. */
  quietHours?: { window: string; inside: boolean; endsAt: string; override: boolean; overridden: boolean };
  daily?: { cap: number; used: number; adding: number | undefined; resetsAt: string };
  perSend?: { cap: number; recipients: number | undefined };
}

/** The lines a confirmation shows before the person says yes: each cap against its count, and the quiet hours. */
export function limitLines(state: LimitState): string[] {
  const lines: string[] = [];
  const { daily, perSend, quietHours } = state;
  const adding = (count: number | undefined) => (count === undefined ? 'an unknown number (the look-up failed: the send will be refused)' : String(count));
  // Over a cap as things stand, a yes is refused at the send: said here, so nobody gives a yes that cannot run.
  const refused = ', over the cap: as it stands, a yes is refused and nothing is sent';
  if (perSend) {
    const over = perSend.recipients !== undefined && perSend.recipients > perSend.cap ? refused : '';
    lines.push(`Recipients per send (ENGAGE_CAP_RECIPIENTS_PER_SEND): ${adding(perSend.recipients)} of at most ${perSend.cap}${over}.`);
  }
  if (daily) {
    const over = daily.adding !== undefined && daily.used + daily.adding > daily.cap ? refused : '';
    lines.push(
      `Messages today (ENGAGE_CAP_MESSAGES_PER_DAY): ${daily.used} of ${daily.cap} used; this adds ${adding(daily.adding)}${over}. The count resets at ${daily.resetsAt} (${state.timeZone}).`,
    );
  }
  if (quietHours) {
    // The person sees what a yes allows if the quiet hours begin before it comes: with the override, a send inside them.
    const where = quietHours.inside
      ? quietHours.overridden
        ? `overridden (quietHoursOverride): sending at ${state.localTime} local time, inside the quiet hours`
        : `now inside them (${state.localTime} local time)`
      : quietHours.override
        ? `now outside them: sending at ${state.localTime} local time; ` +
          'overridden (quietHoursOverride): it is sent even if the quiet hours have begun by the yes'
        : `now outside them: sending at ${state.localTime} local time; if they have begun by the yes, nothing is sent`;
    lines.push(`Quiet hours ${quietHours.window} (${state.timeZone}): ${where}.`);
  }
  return lines;
}

export function recipientsCapRefused(op: Operation, recipients: number, cap: number, keySource: KeySource = 'environment'): CallToolResult {
  return writeFailure(
    op,
    'refused',
    `Refused by a guardrail: ${op.id} would send to ${recipients} recipients, more than the ${cap} ENGAGE_CAP_RECIPIENTS_PER_SEND allows in one send; nothing was sent. This cap is per send and does not reset: send to a smaller audience, or ${whoChanges('ENGAGE_CAP_RECIPIENTS_PER_SEND', 'raises it', keySource)}.`,
  );
}

export function dailyCapRefused(
  op: Operation,
  adding: number,
  state: LimitState & { daily: NonNullable<LimitState['daily']> },
  keySource: KeySource = 'environment',
): CallToolResult {
  const { cap, used, resetsAt } = state.daily;
  return writeFailure(
    op,
    'refused',
    `Refused by a guardrail: ${op.id} would send ${adding} message(s), and ${used} of the ${cap} messages ENGAGE_CAP_MESSAGES_PER_DAY allows per day for this key are used; nothing was sent. The count resets at ${resetsAt} (${state.timeZone}). To send more today, ${whoChanges('ENGAGE_CAP_MESSAGES_PER_DAY', 'raises it', keySource)}.`,
  );
}

export function messageCountUnknown(op: Operation): CallToolResult {
  return writeFailure(
    op,
    'refused',
    `Refused by a guardrail: how many messages ${op.id} would send could not be read, so the send caps (ENGAGE_CAP_RECIPIENTS_PER_SEND, ENGAGE_CAP_MESSAGES_PER_DAY) cannot be checked; nothing was sent. Try again in a moment.`,
  );
}

/**
 * When the model may override the quiet hours. Not every send asks the person first (ENGAGE_CONFIRM may
 * leave it ungated: inbox.ticket.create by default), so the user's own words are what allow it.
 */
const QUIET_OVERRIDE =
  'Only if the user has said to send it now, inside the quiet hours, call again with quietHoursOverride: true: where this operation asks for confirmation, the user sees the override there, but a call that asks for no confirmation is sent at once.';

export function quietHoursRefused(
  op: Operation,
  state: LimitState & { quietHours: NonNullable<LimitState['quietHours']> },
  keySource: KeySource = 'environment',
): CallToolResult {
  const { window, endsAt } = state.quietHours;
  return writeFailure(
    op,
    'refused',
    `Refused by a guardrail: it is ${state.localTime} in ${state.timeZone}, inside the quiet hours ${window} (ENGAGE_QUIET_HOURS), and ${op.id} sends messages to customers; nothing was sent. Quiet hours end at ${endsAt} local time. ${QUIET_OVERRIDE} ${capital(whoChanges('ENGAGE_QUIET_HOURS', 'changes the window', keySource))}.`,
  );
}

/** The idempotencyKey holds the API key in some form: it would be kept and recorded, so it is refused like params. */
export function keyInArguments(): string {
  return (
    "This call's arguments hold the API key, a part of it or an encoding of it, which the model has never been shown: nothing was sent. " +
    'Every call made with this key is now refused for an hour (a local server: until it restarts). ' +
    'Tell the user their API key may be exposed and should be replaced (tenant console, API key settings).'
  );
}

export function keyLocked(): string {
  return (
    'A call made with this API key held a part of the key in its arguments, so every call made with it is refused for an hour (a local server: until it restarts); nothing was sent. ' +
    'Tell the user their API key may be exposed and should be replaced (tenant console, API key settings).'
  );
}

export function idempotencyKeyReused(op: Operation, first: { operationId: string; at: number }): CallToolResult {
  // Another operation is what differs, whatever its params: "other params" would send the model comparing equal ones.
  const what = first.operationId === op.id ? `${first.operationId} with other params` : `another operation, ${first.operationId}`;
  return writeFailure(
    op,
    'refused',
    `Refused: this idempotencyKey was used at ${at(first.at)} for ${what}; nothing was sent. Keys are kept 24 hours: use a new idempotencyKey for a different write, or repeat the first call's operation and params exactly to get its answer.`,
  );
}

/** The first answer given for an idempotency key, repeated: said so first, nothing sent again. */
export function firstOutcomeRepeated(reply: CallToolResult, first: { at: number }): CallToolResult {
  return withNoteFirst(reply, `This idempotencyKey was first used at ${at(first.at)}; its first answer is repeated below, and nothing was sent again.`);
}

/** An answer given again, with what it is said first: in its text and among its notes. */
function withNoteFirst(reply: CallToolResult, note: string): CallToolResult {
  const structured = reply.structuredContent as Record<string, unknown> | undefined;
  const notes = Array.isArray(structured?.notes) ? structured.notes : [];
  return {
    ...reply,
    content: [{ type: 'text', text: note }, ...reply.content],
    ...(structured ? { structuredContent: { ...structured, notes: [note, ...notes] } } : {}),
  };
}

export function idempotentWriteUnsettled(op: Operation, first: { at: number; stopped?: boolean }): CallToolResult {
  const state = first.stopped
    ? "was being sent by a server that stopped (killed, or crashed) before it noted the API's answer"
    : 'is still being sent, or the server that sent it stopped before the API answered';
  const after = first.stopped ? '' : '; the same call with the same key answers its outcome once it is known';
  return writeFailure(
    op,
    'unknown',
    `The write with this idempotencyKey (first used at ${at(first.at)}) ${state}: nothing was sent again. Its outcome is unknown: ${checkWhat(op)}${after}.`,
  );
}

/**
 * A write that needs no yes, asked again after a call whose host cancelled it while the API carried
 * it out: that call's answer, never read, is repeated (said so first), and nothing is sent again.
 */
export function answerNeverRead(op: Operation, reply: CallToolResult, sentAt: number): CallToolResult {
  const note =
    `Exactly this ${op.id} was sent by this server at ${at(sentAt)} for an earlier call with this API key (this host's, or another's using the same key) that was cancelled (or whose host stopped waiting) while it was at the API, and it was carried out: ` +
    "that call's answer, which never reached you, is repeated below, and nothing was sent again. Do not repeat it unless the user asks for it again: the same call then sends it again.";
  return withNoteFirst(reply, note);
}

/**
 * The same, asked on a server that does not hold that answer (another one sharing the state, or
 * this one after a restart): the shared store noted it as never read. Said once; nothing is sent.
 */
export function neverReadElsewhere(op: Operation, earlier: Attempt): CallToolResult {
  const text =
    `Exactly this ${op.id} was sent by ${sender(earlier)} at ${at(earlier.at)} for an earlier call that was cancelled (or whose host stopped waiting, or quit) while it was at the API, and it was carried out: its answer never reached you, and nothing was sent again. ` +
    `That answer is not held here.${seeResult(op)} Do not repeat it unless the user asks for it again: the same call then sends it again.`;
  return { content: [{ type: 'text', text }], structuredContent: { operationId: op.id, outcome: 'done', notes: [text] } };
}
