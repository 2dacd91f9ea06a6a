// The token endpoint (code with PKCE, refresh with rotation), registration (RFC 7591) and
// revocation (RFC 7009). Errors are the OAuth error JSON, built by the SDK's OAuthError.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ClientProblem, type Client } from './clients.js';
import { type OAuthContext, normalResource } from './context.js';
import { hashOf, pkceMatches } from './crypto.js';
import { CODE_TTL_MS, type CodeRecord, untilIssued } from './grants.js';
import { OAuthErrorCode, basicCredentials, field, readBody, readForm, sendOAuthError, sendOAuthJson } from './io.js';

/** The client of a token or revocation request, authenticated (none, or its secret in the body or Basic). */
async function clientOf(ctx: OAuthContext, req: IncomingMessage, form: URLSearchParams): Promise<Client | undefined> {
  const basic = basicCredentials(req);
  if (basic?.id === '') return undefined;
  const id = basic?.id ?? field(form, 'client_id');
  if (basic && field(form, 'client_id') !== undefined && field(form, 'client_id') !== basic.id) return undefined;
  return ctx.clients.authenticate(id, basic?.secret ?? field(form, 'client_secret'), ctx.requester(req));
}

/** The authenticated client, or undefined once the request has been answered (401, or 503 when we are too busy to tell). */
async function authenticated(ctx: OAuthContext, req: IncomingMessage, res: ServerResponse, form: URLSearchParams): Promise<Client | undefined> {
  try {
    const client = await clientOf(ctx, req, form);
    if (!client) sendOAuthError(res, 401, OAuthErrorCode.InvalidClient, 'unknown client, or its authentication failed');
    return client;
  } catch (error) {
    if (!(error instanceof ClientProblem) || error.code !== 'temporarily_unavailable') throw error;
    sendOAuthError(res, 503, 'temporarily_unavailable', error.message, { 'retry-after': '5' });
    return undefined;
  }
}

export async function answerToken(ctx: OAuthContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await readForm(req);
  const client = await authenticated(ctx, req, res, form);
  if (!client) return;
  const grantType = field(form, 'grant_type');
  if (grantType === 'authorization_code') return exchangeCode(ctx, res, form, client);
  if (grantType === 'refresh_token') return refresh(ctx, res, form, client);
  sendOAuthError(res, 400, OAuthErrorCode.UnsupportedGrantType, 'grant_type must be authorization_code or refresh_token');
}

async function exchangeCode(ctx: OAuthContext, res: ServerResponse, form: URLSearchParams, client: Client): Promise<void> {
  const invalid = (why: string) => sendOAuthError(res, 400, OAuthErrorCode.InvalidGrant, why);
  const code = field(form, 'code') ?? '';
  const hash = hashOf(code);
  const record = await ctx.store.get<CodeRecord>(`code:${hash}`);
  if (!record || record.clientId !== client.clientId) return invalid("the code is unknown, expired or not this client's");
  // A code used twice was intercepted: the grant it made, and every token from it, ends (RFC 6749 §4.1.2).
  if (!(await ctx.store.claimOnce(`codeused:${hash}`, CODE_TTL_MS))) {
    await ctx.grants.revoke(record.grantId);
    ctx.log.warn(`oauth: a code was presented twice; its grant is revoked (client ${client.clientId})`);
    return invalid('the code was already used; the grant it made is revoked');
  }
  const redirectUri = field(form, 'redirect_uri');
  if (redirectUri !== record.redirectUri && !(redirectUri === undefined && record.redirectUriOmitted)) {
    return invalid('redirect_uri differs from the one the code was issued for');
  }
  if (!pkceMatches(field(form, 'code_verifier') ?? '', record.codeChallenge)) return invalid('code_verifier does not match the code_challenge');
  const resource = field(form, 'resource');
  if (resource !== undefined && normalResource(resource) !== record.resource) {
    return sendOAuthError(res, 400, 'invalid_target', 'resource differs from the one the person consented to');
  }
  const tokens = await untilIssued(ctx.store, `codeused:${hash}`, async () => {
    const grant = await ctx.grants.get(record.grantId);
    return grant && ctx.grants.issueFirst(grant);
  });
  if (!tokens) return invalid('the grant is gone');
  sendOAuthJson(res, 200, tokens);
}

async function refresh(ctx: OAuthContext, res: ServerResponse, form: URLSearchParams, client: Client): Promise<void> {
  const resource = field(form, 'resource');
  const outcome = await ctx.grants.refresh(field(form, 'refresh_token') ?? '', client.clientId, resource === undefined ? undefined : normalResource(resource));
  if (!outcome.ok && outcome.otherResource) return sendOAuthError(res, 400, 'invalid_target', "resource differs from the grant's");
  if (!outcome.ok && outcome.tooMany) {
    return sendOAuthError(res, 429, 'temporarily_unavailable', 'this grant was refreshed too often; the refresh token still works in a minute', {
      'retry-after': '60',
    });
  }
  if (!outcome.ok) {
    if (outcome.reused) ctx.log.warn(`oauth: a rotated refresh token was used again; its grant is revoked (client ${client.clientId})`);
    const why = outcome.reused ? 'the refresh token was already used; the grant is revoked' : 'the refresh token is unknown, expired or revoked';
    return sendOAuthError(res, 400, OAuthErrorCode.InvalidGrant, why);
  }
  sendOAuthJson(res, 200, outcome.tokens);
}

/** RFC 7009: 200 whatever the token (an unknown one is not an error), once the client is authenticated. */
export async function answerRevoke(ctx: OAuthContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await readForm(req);
  const client = await authenticated(ctx, req, res, form);
  if (!client) return;
  await ctx.grants.revokeToken(field(form, 'token') ?? '', client.clientId);
  sendOAuthJson(res, 200, {});
}

/** RFC 7591, rate-limited per address. */
export async function answerRegister(ctx: OAuthContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (
    String(req.headers['content-type'] ?? '')
      .split(';')[0]
      ?.trim() !== 'application/json'
  ) {
    return sendOAuthError(res, 400, 'invalid_client_metadata', 'the body must be application/json');
  }
  let body: unknown;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    return sendOAuthError(res, 400, 'invalid_client_metadata', 'the body is not JSON');
  }
  try {
    sendOAuthJson(res, 201, await ctx.clients.register(body, ctx.requester(req)));
  } catch (error) {
    if (!(error instanceof ClientProblem)) throw error;
    const retryAfter: Record<string, string> = error.retryAfterSeconds === undefined ? {} : { 'retry-after': String(error.retryAfterSeconds) };
    sendOAuthError(res, error.code === 'temporarily_unavailable' ? 429 : 400, error.code, error.message, retryAfter);
  }
}
