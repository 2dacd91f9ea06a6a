// The authorization endpoint and its consent page: the request is checked (client, exact redirect
// URI but a loopback one's port, PKCE S256, resource, scopes) and carried by its page's form, sealed under a key of the KEK
// (10 minutes; bound to a cookie; nothing is stored for a page nobody answers, so opening pages
// costs no memory), and a consent with a valid key makes a grant and a code (single use), sent back
// with state and iss (RFC 9207).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isPrintableAsciiKey } from '@engage-mcp/shared';
import { ClientProblem, isLoopbackHost, isRegisteredRedirect, type Client } from './clients.js';
import { type OAuthContext, normalResource } from './context.js';
import { hashOf, newId, newSecret, sameText, CODE_PREFIX } from './crypto.js';
import { CODE_TTL_MS, type CodeRecord, untilIssued } from './grants.js';
import { BodyProblem, cookieOf, field, readForm, redirect, sendHtml } from './io.js';
import { clientInWords, consentPage, errorPage, isWriteScope } from './pages.js';

export const PENDING_TTL_MS = 10 * 60 * 1000;
/** Keys one requester may enter on consent pages in 10 minutes (a person mistyping needs a few). */
export const KEY_TRIES_PER_REQUESTER = 20;
/**
 * Sign-ins one tenant key may make in 10 minutes, from any number of addresses: each leaves a grant
 * and a code for 10 minutes even if the code is never exchanged, so a key signing in from many
 * addresses (each with its own 20 key tries) could otherwise fill the store.
 */
export const CONSENTS_PER_KEY = 60;
/** The longest state carried (the sealed request must fit the consent form's 16 KiB). */
const MAX_STATE = 2048;

interface Pending {
  clientId: string;
  clientName: string;
  redirectUri: string;
  /** The request named no redirect_uri (one was registered): the token request need not either. */
  redirectUriOmitted?: true;
  codeChallenge: string;
  state?: string;
  resource: string;
  offered: string[];
  requested: string[];
  csrf: string;
  cookieHash: string;
  /** What the single use is claimed by. */
  nonce: string;
  expiresAt: number;
}

class Refused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const cookieName = (secure: boolean) => (secure ? '__Host-emcp_consent' : 'emcp_consent');

/** GET /oauth/authorize: a request that cannot name a safe way back gets a page; any other problem goes back to a loopback client, or is a page with a link back. */
export async function showConsent(ctx: OAuthContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const query = new URL(req.url ?? '/', 'http://x').searchParams;
  let client: Client | undefined;
  try {
    client = await ctx.clients.find(query.get('client_id') ?? '', ctx.requester(req));
  } catch (error) {
    if (error instanceof ClientProblem && error.detail) ctx.log.info(`oauth: a client metadata document was not fetched: ${error.detail}`);
    return sendHtml(
      res,
      400,
      errorPage(`The client could not be identified: ${error instanceof ClientProblem ? error.message : 'its metadata could not be read'}.`),
    );
  }
  if (!client) return sendHtml(res, 400, errorPage('Unknown client: it is not registered here (or its registration expired).'));
  const given = query.get('redirect_uri') ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  if (!given || !isRegisteredRedirect(client.redirectUris, given)) return sendHtml(res, 400, errorPage('The redirect URI is not one this client registered.'));
  const back = (code: string, description: string) => {
    const location = backTo(ctx, given, { error: code, error_description: description }, query.get('state'));
    // RFC 9700 §4.11.2: anyone may register a redirect URI here, so an error found before the
    // person has seen our page is never an automatic redirect to the web (an open redirector on
    // our name); only the person's own machine (a loopback address) is sent back by itself.
    if (isLoopbackRedirect(given)) return redirect(res, location);
    sendHtml(
      res,
      400,
      errorPage(`${capitalized(clientInWords(client.clientName, client.clientId))} sent a sign-in request this server cannot take: ${description}.`, {
        href: location,
        to: originOf(given),
      }),
    );
  };
  try {
    const record = pendingFrom(ctx, client, given, query);
    const cookie = newId();
    const secure = ctx.issuer().startsWith('https:');
    const pending: Pending = { ...record, cookieHash: hashOf(cookie), nonce: newId(), expiresAt: Date.now() + PENDING_TTL_MS };
    const setCookie = `${cookieName(secure)}=${cookie}; Path=/${secure ? '; Secure' : ''}; HttpOnly; SameSite=Strict; Max-Age=600`;
    sendHtml(res, 200, renderConsent(ctx.consent.seal(pending), pending), { formTargets: [formTarget(given)], cookie: setCookie });
  } catch (error) {
    if (error instanceof Refused) return back(error.code, error.message);
    throw error;
  }
}

function pendingFrom(ctx: OAuthContext, client: Client, redirectUri: string, query: URLSearchParams): Omit<Pending, 'cookieHash' | 'nonce' | 'expiresAt'> {
  for (const name of ['response_type', 'client_id', 'redirect_uri', 'state', 'scope', 'code_challenge', 'code_challenge_method', 'resource']) {
    if (query.getAll(name).length > 1) throw new Refused('invalid_request', `${name} is given more than once`);
  }
  if (query.get('response_type') !== 'code') throw new Refused('unsupported_response_type', 'only response_type=code is supported');
  const challenge = query.get('code_challenge');
  if (!challenge || query.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
    throw new Refused('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256');
  }
  const resource = normalResource(query.get('resource') ?? `${ctx.issuer()}/mcp`);
  const offered = ctx.scopesOf(resource);
  // Not in the request's words: the message is shown on our page (with a link to the client's site).
  if (!offered) throw new Refused('invalid_target', 'the resource it names is not one of this server’s');
  if (offered.length === 0) throw new Refused('invalid_target', 'the resource it names serves no operation here (the service’s settings leave them all out)');
  const asked = (query.get('scope') ?? '').split(' ').filter((scope) => scope !== '');
  const requested = asked.filter((scope) => offered.includes(scope));
  if (asked.length > 0 && requested.length === 0) throw new Refused('invalid_scope', `none of the requested scopes is offered by ${resource}`);
  const state = query.get('state') ?? undefined;
  if (state !== undefined && state.length > MAX_STATE) throw new Refused('invalid_request', `state is longer than ${MAX_STATE} characters`);
  const record = { clientId: client.clientId, clientName: client.clientName, redirectUri, codeChallenge: challenge, resource, offered, requested };
  const omitted = query.get('redirect_uri') === null ? { redirectUriOmitted: true as const } : {};
  return { ...record, ...omitted, ...(state !== undefined ? { state } : {}), csrf: newId() };
}

/** Write scopes are ticked only when the client asked for them; reads are ticked when asked, or when nothing was asked. */
function renderConsent(id: string, pending: Pending, error?: string, ticked?: string[]): string {
  const checked = (scope: string) =>
    ticked ? ticked.includes(scope) : pending.requested.length > 0 ? pending.requested.includes(scope) : !isWriteScope(scope);
  return consentPage({
    requestId: id,
    csrf: pending.csrf,
    clientName: pending.clientName,
    clientId: pending.clientId,
    redirectUri: pending.redirectUri,
    resource: pending.resource,
    scopes: pending.offered.map((scope) => ({ scope, checked: checked(scope) })),
    ...(error ? { error } : {}),
  });
}

function isLoopbackRedirect(redirectUri: string): boolean {
  const url = new URL(redirectUri);
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

/** An app's private-use scheme has no origin to name (and may carry a web address): the URI whole. */
function originOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  if (url.protocol === 'https:') return url.host;
  return url.protocol === 'http:' ? `${url.protocol}//${url.host}` : url.href;
}

function formTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : url.protocol;
}

function backTo(ctx: OAuthContext, redirectUri: string, params: Record<string, string>, state: string | null | undefined): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  if (state) url.searchParams.set('state', state);
  url.searchParams.set('iss', ctx.issuer());
  return url.href;
}

/** POST /oauth/authorize: the person's answer. */
export async function answerConsent(ctx: OAuthContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let form: URLSearchParams;
  try {
    form = await readForm(req);
  } catch (error) {
    return sendHtml(res, 400, errorPage(error instanceof BodyProblem ? error.message : 'bad form'));
  }
  const id = field(form, 'request') ?? '';
  const opened = ctx.consent.open<Pending>(id);
  const pending = opened && opened.expiresAt > Date.now() ? opened : undefined;
  if (!pending) return sendHtml(res, 400, errorPage('This sign-in request is unknown or older than 10 minutes.'));
  const csrfProblem = forgery(ctx, req, form, pending);
  if (csrfProblem) return sendHtml(res, 403, errorPage(csrfProblem));
  const target = { formTargets: [formTarget(pending.redirectUri)] };
  const used = `pendingused:${pending.nonce}`;
  const answered = () => sendHtml(res, 400, errorPage('This sign-in request was already answered.'));
  if (field(form, 'decision') !== 'allow') {
    // A decline stores nothing (it may be repeated harmlessly); one after the consent is refused.
    if (await ctx.store.get(used)) return answered();
    return redirect(res, backTo(ctx, pending.redirectUri, { error: 'access_denied', error_description: 'the person declined' }, pending.state));
  }
  const ticked = form.getAll('scope').filter((scope) => pending.offered.includes(scope));
  const key = (field(form, 'api_key') ?? '').trim();
  const again = (message: string) => sendHtml(res, 400, renderConsent(id, pending, message, ticked), target);
  if (ticked.length === 0) return again('Tick at least one permission.');
  if (key === '' || key.length > 1024 || /[\s\p{Cc}]/u.test(key)) return again('Enter the tenant API key.');
  if (!isPrintableAsciiKey(key)) return again('This key has characters beyond ASCII, which no tenant API key has: paste it exactly as the console showed it.');
  // Keys tried per requester, counted before the check: a guesser cannot hold the API connections
  // that keys not yet accepted share (fairness.ts), nor use the page as a fast oracle.
  if ((await ctx.store.count(`keytries:${ctx.requester(req)}`, PENDING_TTL_MS)) > KEY_TRIES_PER_REQUESTER) {
    return again(`More than ${KEY_TRIES_PER_REQUESTER} keys were entered from this network in the last 10 minutes. Wait a few minutes, then try again.`);
  }
  const check = await ctx.checkKey(key);
  if (check === 'invalid') return again('The API refused this key: it is invalid, revoked or expired. Check it in the tenant console.');
  if (check === 'unknown') return again('The key could not be checked just now (the API did not answer). Try again in a moment.');
  if ((await ctx.store.count(`consents:${ctx.grants.keyIndex(key)}`, PENDING_TTL_MS)) > CONSENTS_PER_KEY) {
    return again(`This key was used to sign in more than ${CONSENTS_PER_KEY} times in the last 10 minutes. Wait a few minutes, then try again.`);
  }
  if (!(await ctx.store.claimOnce(used, PENDING_TTL_MS))) return answered();
  // A store that stops answering here is "try again" on the error page: the same form sent again is no second answer.
  const code = await untilIssued(ctx.store, used, async () => {
    await ctx.clients.confirm(pending.clientId);
    const grant = await ctx.grants.create({
      clientId: pending.clientId,
      clientName: pending.clientName,
      scopes: ticked,
      resource: pending.resource,
      tenantKey: key,
    });
    const made = newSecret(CODE_PREFIX);
    const record: CodeRecord = {
      grantId: grant.id,
      clientId: pending.clientId,
      redirectUri: pending.redirectUri,
      ...(pending.redirectUriOmitted ? { redirectUriOmitted: true as const } : {}),
      codeChallenge: pending.codeChallenge,
      resource: pending.resource,
    };
    await ctx.store.put(`code:${hashOf(made)}`, record, CODE_TTL_MS);
    return made;
  });
  ctx.log.info(`oauth: consent given to ${pending.clientId} for ${ticked.length} scope(s)`);
  redirect(res, backTo(ctx, pending.redirectUri, { code }, pending.state));
}

/** CSRF: the form's token, the cookie set with the page, and (when a browser says) our own origin. */
function forgery(ctx: OAuthContext, req: IncomingMessage, form: URLSearchParams, pending: Pending): string | undefined {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== ctx.issuer()) return 'This form was sent from another site.';
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return 'This form was sent from another site.';
  const csrf = field(form, 'csrf') ?? '';
  const cookie = cookieOf(req, cookieName(ctx.issuer().startsWith('https:'))) ?? '';
  if (!sameText(csrf, pending.csrf) || !sameText(hashOf(cookie), pending.cookieHash))
    return 'This form is not the one this browser was shown; start again from the app.';
  return undefined;
}

/** A sentence's first letter as a capital (clientInWords begins a registered client's words with "the"). */
function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
