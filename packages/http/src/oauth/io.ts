// Reading forms and writing the OAuth routes' answers on Node's request and response.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';

const FORM_LIMIT = 16 * 1024;

export class BodyProblem extends Error {}

/** An application/x-www-form-urlencoded (or, for registration, JSON) body, at most 16 KiB. */
export async function readBody(req: IncomingMessage): Promise<string> {
  if (Number(req.headers['content-length'] ?? 0) > FORM_LIMIT) throw new BodyProblem('the request body is too large');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > FORM_LIMIT) throw new BodyProblem('the request body is too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new BodyProblem('the body must be application/x-www-form-urlencoded');
  return new URLSearchParams(await readBody(req));
}

/** One value of a form field; a field given twice is refused (RFC 6749 §3.1). */
export function field(form: URLSearchParams, name: string): string | undefined {
  const values = form.getAll(name);
  if (values.length > 1) throw new BodyProblem(`${name} is given more than once`);
  return values[0] === '' ? undefined : values[0];
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };
const CORS = { 'access-control-allow-origin': '*' };

export function sendOAuthJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...NO_STORE, ...CORS, ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendOAuthError(
  res: ServerResponse,
  status: number,
  code: OAuthErrorCode | string,
  description: string,
  headers: Record<string, string> = {},
): void {
  sendOAuthJson(res, status, new OAuthError(code, description).toResponseObject(), headers);
}

export { OAuthErrorCode };

/** Pages: never framed, no script, forms only to us (and the redirect after a consent, which a browser checks against form-action). */
export function sendHtml(res: ServerResponse, status: number, html: string, options: { formTargets?: string[]; cookie?: string } = {}): void {
  const formAction = ["'self'", ...(options.formTargets ?? [])].join(' ');
  res.writeHead(status, {
    ...NO_STORE,
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    // same-origin, not no-referrer: with no-referrer a browser sends Origin: null on the form's POST.
    'referrer-policy': 'same-origin',
    ...(options.cookie ? { 'set-cookie': options.cookie } : {}),
  });
  res.end(html);
}

export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { ...NO_STORE, location, 'content-length': 0 });
  res.end();
}

/** A web-standard Response (the SDK's metadata answers) written to Node's response. */
export async function sendWeb(res: ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, { ...Object.fromEntries(response.headers), 'content-length': body.length });
  res.end(body);
}

export function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of String(req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** HTTP Basic client credentials (RFC 6749 §2.3.1), form-urldecoded. */
export function basicCredentials(req: IncomingMessage): { id: string; secret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(String(req.headers.authorization ?? ''));
  if (!match) return undefined;
  const [id, ...secret] = Buffer.from(match[1] as string, 'base64')
    .toString('utf8')
    .split(':');
  try {
    return id ? { id: decodeURIComponent(id), secret: decodeURIComponent(secret.join(':')) } : undefined;
  } catch {
    return { id: '', secret: '' }; // not urlencoded: a client that authenticates as no one (401)
  }
}
