// OAuth for remote mode: the service is its own authorization server, whose sign-in step is the
// person entering the tenant key once on a consent page. From the SDK: the discovery documents
// (oauthMetadataResponse), Bearer verification with audience binding and its challenges
// (verifyBearerToken, bearerAuthChallengeResponse) and the OAuth error JSON (OAuthError). Ours:
// the consent page, the token endpoint, registration, CIMD, revocation, the sealed key (crypto.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  OAuthError,
  OAuthErrorCode as ErrorCode,
  bearerAuthChallengeResponse,
  getOAuthProtectedResourceMetadataUrl,
  oauthMetadataResponse,
  validateHostHeader,
  verifyBearerToken,
  type AuthInfo,
  type OAuthMetadata,
} from '@modelcontextprotocol/server';
import { keyFingerprint, type Logger } from '@engage-mcp/shared';
import { type Exchange, withoutTrailingSlashes } from '../exchange.js';
import type { Refusal } from '../respond.js';
import { answerConsent, showConsent } from './authorize.js';
import { Clients, type CimdSeams } from './clients.js';
import { answerConnections, showConnections } from './connections.js';
import { type KeyCheck, type OAuthContext, normalResource } from './context.js';
import { TOKEN_PREFIX, kekKeys, openRecord, sealRecord } from './crypto.js';
import { Grants } from './grants.js';
import { BodyProblem, OAuthErrorCode, sendHtml, sendOAuthError, sendWeb } from './io.js';
import { errorPage, isWriteScope } from './pages.js';
import { MemoryOAuthStore, type OAuthStore } from './store.js';
import { requesterOf } from './requester.js';
import { answerRegister, answerRevoke, answerToken } from './token.js';

export { TOKEN_PREFIX } from './crypto.js';
export { MemoryOAuthStore, RedisOAuthStore, type OAuthStore } from './store.js';
export { parseKek } from './crypto.js';

export interface OAuthOptions {
  /** ENGAGE_OAUTH_KEK's 32 bytes. */
  kek: Uint8Array;
  /** ENGAGE_PUBLIC_URL: the public origin (the issuer, and the base of every resource). Unset: the service's own loopback URL (tests). */
  publicUrl?: string;
  /** Whether a tenant key (X-API-Key, or a Bearer without our prefix) is still accepted beside OAuth; true by default. */
  keyMode?: boolean;
  /** Redis for several replicas; in-process by default. */
  store?: OAuthStore;
  /** How many proxies in front write X-Forwarded-For (requester.ts); 0 by default. */
  trustedProxyHops?: number;
  /** Test seams for Client ID Metadata Document fetches (loopback, a test CA). Never from the environment. */
  cimd?: CimdSeams;
}

export interface OAuthDeps {
  /** MCP endpoint path → the API scopes its operations use. */
  scopesByPath: Map<string, string[]>;
  allowedHosts: string[];
  checkKey(tenantKey: string): Promise<KeyCheck>;
  /** A request came with a live access token of a grant made with this key (its fingerprint). */
  onAdmitted?(keyId: string): void;
  log: Logger;
}

/** The OAuth face of the service: its routes, its guard, the challenge of the key guard, and the end of grants whose key the API refused. */
export interface OAuth {
  keyMode: boolean;
  owns(path: string): boolean;
  /** `log`: the request's (its lines carry the request's id). */
  serve(req: IncomingMessage, res: ServerResponse, path: string, log: Logger): Promise<void>;
  /** The guard: admits our access tokens (their audience must be this endpoint); leaves anything else to the key guard. */
  guard(exchange: Exchange): Promise<Refusal | undefined> | undefined;
  /** The 401 when no usable credential came: a bare challenge with resource_metadata and scope. */
  challenge(exchange: Exchange, keyRefused: boolean): Refusal;
  /** The API answered 401 for this key: every grant made with it ends. */
  keyRefused(tenantKey: string): void;
  setPublicUrl(url: string): void;
}

export function createOAuth(options: OAuthOptions, deps: OAuthDeps): OAuth {
  const store = options.store ?? new MemoryOAuthStore();
  let publicUrl = options.publicUrl === undefined ? undefined : withoutTrailingSlashes(options.publicUrl);
  const issuer = () => publicUrl as string;
  const resourceOf = (path: string) => `${issuer()}${path}`;
  const consentKey = kekKeys(options.kek).consent;
  const ctx: OAuthContext = {
    store,
    grants: new Grants(store, options.kek),
    clients: new Clients(store, options.cimd, (line) => deps.log.info(line)),
    issuer,
    scopesOf: (resource) => {
      const path = normalResource(resource).slice(issuer().length);
      return normalResource(resource).startsWith(`${issuer()}/`) ? deps.scopesByPath.get(path) : undefined;
    },
    checkKey: deps.checkKey,
    requester: (req) => requesterOf(req, options.trustedProxyHops ?? 0),
    consent: {
      seal: (record) => sealRecord(consentKey, record, 'consent request'),
      open: (sealed) => openRecord(consentKey, sealed, 'consent request'),
    },
    log: deps.log,
  };
  const verifier = accessTokenVerifier(ctx);
  const prmUrl = (path: string) => getOAuthProtectedResourceMetadataUrl(new URL(resourceOf(path)));
  return {
    keyMode: options.keyMode !== false,
    owns: (path) => path.startsWith('/.well-known/oauth-') || path.startsWith('/oauth/'),
    serve: (req, res, path, log) => serveRoute({ ...ctx, log }, deps, req, res, path),
    guard(exchange) {
      const bearer = /^Bearer\s+(\S+)\s*$/i.exec(String(exchange.req.headers.authorization ?? ''))?.[1];
      if (!bearer?.startsWith(TOKEN_PREFIX)) return undefined;
      return admit(exchange, verifier, resourceOf(exchange.path), prmUrl(exchange.path), deps.onAdmitted);
    },
    challenge: (exchange, keyRefused) => challengeOf(deps, exchange, keyRefused, prmUrl(exchange.path)),
    keyRefused(tenantKey) {
      void ctx.grants
        .revokeAllOfKey(tenantKey)
        .then((count) => count > 0 && deps.log.warn(`oauth: the API refused a key (401); its ${count} grant(s) are revoked`))
        .catch((error: unknown) =>
          deps.log.error(`oauth: revoking the grants of a refused key failed: ${error instanceof Error ? error.message : String(error)}`),
        );
    },
    setPublicUrl(url) {
      publicUrl ??= withoutTrailingSlashes(url);
    },
  };
}

/** Our access tokens, opened: the request then runs with the grant's tenant key, bound to the grant. */
function accessTokenVerifier(ctx: OAuthContext): { verifyAccessToken(token: string): Promise<AuthInfo> } {
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const opened = await ctx.grants.openAccess(token);
      if (!opened) throw new OAuthError(ErrorCode.InvalidToken, 'the access token is unknown, expired or revoked');
      const { grant, tenantKey } = opened;
      return {
        token: tenantKey,
        clientId: `${keyFingerprint(tenantKey)}:grant:${grant.id}`,
        scopes: grant.scopes,
        expiresAt: Math.floor(opened.expiresAt / 1000),
        resource: new URL(grant.resource),
        extra: { grant: { id: grant.id, scopes: grant.scopes } },
      };
    },
  };
}

/** The 401 when no usable credential came: a bare challenge with resource_metadata and the endpoint's read scopes. */
function challengeOf(deps: OAuthDeps, exchange: Exchange, keyRefused: boolean, prm: URL | string): Refusal {
  const scope = (deps.scopesByPath.get(exchange.path) ?? []).filter((each) => !isWriteScope(each)).join(' ');
  const base = `Bearer resource_metadata="${prm}", scope="${scope}"`;
  if (!keyRefused) {
    const message = 'Not signed in: connect with OAuth (this server publishes its authorization metadata), or send the tenant API key as X-API-Key.';
    return { status: 401, error: 'unauthorized', message, headers: { 'www-authenticate': base } };
  }
  const message = 'Tenant API keys are not accepted by this service: connect with OAuth (sign in once with the key on the consent page).';
  return { status: 401, error: 'invalid_token', message, headers: { 'www-authenticate': `${base}, error="invalid_token", error_description="use OAuth"` } };
}

async function admit(
  exchange: Exchange,
  verifier: { verifyAccessToken(token: string): Promise<AuthInfo> },
  resource: string,
  prm: string,
  onAdmitted?: (keyId: string) => void,
): Promise<Refusal | undefined> {
  try {
    const auth = await verifyBearerToken(exchange.req.headers.authorization, { verifier, expectedResource: new URL(resource), resourceMetadataUrl: prm });
    exchange.auth = auth;
    exchange.key = auth.token;
    exchange.keyId = keyFingerprint(auth.token);
    onAdmitted?.(exchange.keyId);
    return undefined;
  } catch (error) {
    const response = bearerAuthChallengeResponse(error, { resourceMetadataUrl: prm });
    const body = (await response.json()) as { error?: string; error_description?: string };
    const headers = Object.fromEntries(response.headers);
    delete headers['content-type'];
    return { status: response.status, error: body.error ?? 'invalid_token', message: body.error_description ?? 'The access token was refused.', headers };
  }
}

function authorizationServerMetadata(issuer: string, scopes: string[]): OAuthMetadata & Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    scopes_supported: scopes,
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    service_documentation: `${issuer}/oauth/connections`,
  };
}

async function serveRoute(ctx: OAuthContext, deps: OAuthDeps, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  if (!validateHostHeader(req.headers.host, deps.allowedHosts).ok) return sendOAuthError(res, 403, 'invalid_request', 'this Host is not served here');
  try {
    if (path.startsWith('/.well-known/')) {
      if (!['GET', 'HEAD', 'OPTIONS'].includes(req.method ?? ''))
        return sendOAuthError(res, 405, 'invalid_request', 'the metadata documents are read with GET');
      return await serveMetadata(ctx, deps, req, res);
    }
    const route = `${req.method} ${path}`;
    if (req.method === 'OPTIONS') return preflight(res);
    if (route === 'GET /oauth/authorize') return await showConsent(ctx, req, res);
    if (route === 'POST /oauth/authorize') return await answerConsent(ctx, req, res);
    if (route === 'POST /oauth/token') return await answerToken(ctx, req, res);
    if (route === 'POST /oauth/register') return await answerRegister(ctx, req, res);
    if (route === 'POST /oauth/revoke') return await answerRevoke(ctx, req, res);
    if (route === 'GET /oauth/connections') return await showConnections(ctx, res);
    if (route === 'POST /oauth/connections') return await answerConnections(ctx, req, res);
    sendOAuthError(res, 404, 'not_found', 'no such OAuth endpoint');
  } catch (error) {
    if (res.headersSent) return void res.destroy();
    if (error instanceof BodyProblem) return sendOAuthError(res, 400, OAuthErrorCode.InvalidRequest, error.message);
    ctx.log.error(`oauth: ${error instanceof Error ? error.message : String(error)}`);
    if (path === '/oauth/authorize' || path === '/oauth/connections') return sendHtml(res, 500, errorPage('Something went wrong on our side; try again.'));
    sendOAuthError(res, 503, OAuthErrorCode.TemporarilyUnavailable, 'the OAuth state could not be reached; try again');
  }
}

/** The discovery documents, through the SDK's oauthMetadataResponse: one per resource (/mcp and each /mcp/<domain>), the root naming /mcp. */
async function serveMetadata(ctx: OAuthContext, deps: OAuthDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const issuer = ctx.issuer();
  const request = new Request(new URL(req.url ?? '/', issuer), { method: req.method ?? 'GET', headers: { ...(req.headers as Record<string, string>) } });
  const allScopes = [...new Set([...deps.scopesByPath.values()].flat())];
  const oauthMetadata = authorizationServerMetadata(issuer, allScopes);
  const insecure = issuer.startsWith('http:');
  const wanted = withoutTrailingSlashes(new URL(request.url).pathname);
  const path = wanted === '/.well-known/oauth-protected-resource' ? '/mcp' : wanted.replace('/.well-known/oauth-protected-resource', '');
  const scopesSupported = deps.scopesByPath.get(path);
  const resourceServerUrl = new URL(`${issuer}${scopesSupported ? path : '/mcp'}`);
  const options = {
    oauthMetadata,
    resourceServerUrl,
    scopesSupported: scopesSupported ?? allScopes,
    resourceName: 'engage-mcp',
    dangerouslyAllowInsecureIssuerUrl: insecure,
  };
  const answer =
    wanted === '/.well-known/oauth-protected-resource'
      ? oauthMetadataResponse(new Request(new URL('/.well-known/oauth-protected-resource/mcp', issuer), request), options)
      : oauthMetadataResponse(request, options);
  if (answer) return sendWeb(res, answer);
  sendOAuthError(res, 404, 'not_found', 'no such metadata document');
}

function preflight(res: ServerResponse): void {
  res.writeHead(204, {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'POST, OPTIONS',
    'access-control-allow-headers': 'authorization, content-type',
    'access-control-max-age': '600',
  });
  res.end();
}
