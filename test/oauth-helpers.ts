// Helpers for the OAuth tests: PKCE, a registration, and the consent page answered over plain
// fetch (as a browser would post it: the page's hidden fields, its cookie, our Origin).
import { createHash, randomBytes } from 'node:crypto';

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const REDIRECT = 'http://127.0.0.1:9/callback';

export async function register(issuer: string, metadata: Record<string, unknown> = {}): Promise<{ client_id: string; [name: string]: unknown }> {
  const response = await fetch(`${issuer}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Test client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...metadata }),
  });
  if (response.status !== 201) throw new Error(`registration: ${response.status} ${await response.text()}`);
  return (await response.json()) as { client_id: string };
}

export interface AuthorizeInput {
  clientId: string;
  challenge: string;
  resource?: string;
  scope?: string;
  redirectUri?: string;
  state?: string;
}

export function authorizeUrl(issuer: string, input: AuthorizeInput): string {
  const url = new URL('/oauth/authorize', issuer);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', input.clientId);
  url.searchParams.set('redirect_uri', input.redirectUri ?? REDIRECT);
  url.searchParams.set('code_challenge', input.challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('state', input.state ?? 'st-1');
  if (input.resource) url.searchParams.set('resource', input.resource);
  if (input.scope) url.searchParams.set('scope', input.scope);
  return url.href;
}

export interface ConsentPage {
  status: number;
  html: string;
  headers: Headers;
  request: string;
  csrf: string;
  cookie: string;
}

export async function openConsent(url: string, headers: Record<string, string> = {}): Promise<ConsentPage> {
  const response = await fetch(url, { redirect: 'manual', headers });
  const html = await response.text();
  const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return { status: response.status, html, headers: response.headers, request: hidden('request'), csrf: hidden('csrf'), cookie };
}

/** Posts the consent form; returns the status, the Location (a redirect back) and the body. */
export async function postConsent(
  issuer: string,
  page: ConsentPage,
  fields: { key: string; scopes: string[]; decision?: string; csrf?: string; cookie?: string; origin?: string },
): Promise<{ status: number; location: string | null; html: string }> {
  const form = new URLSearchParams({ request: page.request, csrf: fields.csrf ?? page.csrf, api_key: fields.key, decision: fields.decision ?? 'allow' });
  for (const scope of fields.scopes) form.append('scope', scope);
  const response = await fetch(`${issuer}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: fields.cookie ?? page.cookie, origin: fields.origin ?? issuer },
    body: form,
  });
  return { status: response.status, location: response.headers.get('location'), html: await response.text() };
}

export async function tokenRequest(issuer: string, fields: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${issuer}/oauth/token`, { method: 'POST', body: new URLSearchParams(fields) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Registration, consent and the code exchange in one: the tokens for `resource`. */
export async function signIn(
  issuer: string,
  key: string,
  options: { resource?: string; scopes?: string[]; clientId?: string } = {},
): Promise<{ access: string; refresh: string; clientId: string; scope: string }> {
  const clientId = options.clientId ?? (await register(issuer)).client_id;
  const { verifier, challenge } = pkce();
  const resource = options.resource ?? `${issuer}/mcp`;
  const page = await openConsent(authorizeUrl(issuer, { clientId, challenge, resource }));
  const answer = await postConsent(issuer, page, { key, scopes: options.scopes ?? ['contact.read', 'tenant.read'] });
  const code = new URL(answer.location ?? 'http://x/').searchParams.get('code');
  if (!code) throw new Error(`no code: ${answer.status} ${answer.html}`);
  const tokens = await tokenRequest(issuer, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    client_id: clientId,
    resource,
  });
  if (tokens.status !== 200) throw new Error(`token: ${JSON.stringify(tokens.body)}`);
  return { access: tokens.body.access_token as string, refresh: tokens.body.refresh_token as string, clientId, scope: tokens.body.scope as string };
}

/** Only for refusals, which come before any MCP message is read: the status and challenge of a request with this Authorization. */
export async function mcpStatus(url: string, authorization?: string): Promise<{ status: number; challenge: string | null }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(authorization ? { authorization } : {}),
    },
    body: '{}',
  });
  await response.arrayBuffer();
  return { status: response.status, challenge: response.headers.get('www-authenticate') };
}
