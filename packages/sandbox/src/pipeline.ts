// One request, in the order the checks are made (several tests pin it): record it, match its
// route, check its key (even for a path that is malformed or unknown, spec section 5), take a
// rate-limit token, then answer a malformed path, an unknown route or a missing scope; read the
// body of a write; and carry it out, unless an injected fault answers instead.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerWithFault } from './faults.js';
import { ApiFailure, bad } from './failure.js';
import { answer, carryOut, replyTo, type Headers } from './reply.js';
import { match, type Match } from './router.js';
import type { KeyRecord, SandboxState } from './state.js';
import type { SeenRequest } from './types.js';

export async function handleRequest(sandbox: SandboxState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  const rawPath = (req.url ?? '/').split('?')[0] as string;
  const record: SeenRequest = { method, path: req.url ?? '/', operationId: null, status: 0 };
  sandbox.seen.push(record);
  const reply = replyTo(res, record);

  const { matched, malformed } = matchRoute(method, rawPath);
  record.operationId = matched?.route.operationId ?? null;

  const caller = authenticate(sandbox, req);
  if (caller instanceof ApiFailure) return reply.fail(caller);
  record.keyLabel = caller.key.label;

  const rate = takeToken(sandbox, caller);
  if (rate.retryAfter !== undefined)
    return reply.fail(new ApiFailure(429, 42900, 'rate limit exceeded'), { ...rate.headers(), 'Retry-After': rate.retryAfter });

  if (malformed) return reply.fail(malformed, rate.headers());
  if (!matched) return reply.fail(new ApiFailure(404, 40400, `no route ${method} ${rawPath}`), rate.headers());
  const { route: hit, params } = matched;
  if (!caller.key.scopes.has(hit.scope)) return reply.fail(new ApiFailure(403, 40300, `API key lacks the scope ${hit.scope}`), rate.headers());

  const body = await readBody(req, method);
  if (body instanceof ApiFailure) return reply.fail(body, rate.headers());

  const fault = sandbox.takeFault(hit.operationId, method);
  const run = () => carryOut(sandbox, hit, { tenant: caller.key.tenant, params, body, sandbox });
  if (!fault) return answer(reply, run(), rate.headers());
  record.status = -1; // a fault answered
  return answerWithFault(fault, {
    req,
    res,
    reply,
    run,
    answer: (outcome) => answer(reply, outcome, rate.headers()),
    rateHeaders: rate.headers,
    setStatus: (status) => {
      record.status = status;
    },
  });
}

/** A path that cannot be decoded is bad input, but answered only once the key is checked: every endpoint needs a key first (spec section 5). */
function matchRoute(method: string, rawPath: string): { matched?: Match; malformed?: ApiFailure } {
  try {
    return { matched: match(method, rawPath) };
  } catch (error) {
    return { malformed: error as ApiFailure };
  }
}

interface Caller {
  /** The key as presented, which names its rate bucket. */
  presented: string;
  key: KeyRecord;
}

/** The key from x-api-key, or Authorization: Bearer; a 401 when it is missing, unknown, revoked or expired. */
function authenticate(sandbox: SandboxState, req: IncomingMessage): Caller | ApiFailure {
  const authorization = req.headers.authorization;
  const presented = (req.headers['x-api-key'] as string | undefined) ?? (authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined);
  const key = presented ? sandbox.keyRecord(presented) : undefined;
  if (!key || key.revoked || key.expiresAt <= Date.now()) {
    return new ApiFailure(401, 40100, key?.revoked ? 'API key revoked' : key ? 'API key expired' : 'invalid API key');
  }
  return { presented: presented!, key };
}

/**
 * Takes a token from the key's bucket and its tenant's. The RateLimit headers are read when an
 * answer is sent; retryAfter is set when either bucket was empty.
 */
function takeToken(sandbox: SandboxState, { presented, key }: Caller): { headers: () => Headers; retryAfter?: number } {
  const at = Date.now();
  const { keyBucket, tenantBucket } = sandbox.bucketsFor(presented, key);
  const limited = !keyBucket.take(at) || !tenantBucket.take(at);
  const headers = () => ({
    'RateLimit-Limit': key.rateLimit,
    'RateLimit-Remaining': Math.min(keyBucket.remaining(at), tenantBucket.remaining(at)),
    'RateLimit-Reset': Math.max(keyBucket.secondsUntilFull(at), 0),
  });
  if (!limited) return { headers };
  return { headers, retryAfter: Math.max(1, keyBucket.secondsUntilToken(at), tenantBucket.secondsUntilToken(at)) };
}

/** The JSON object body of a POST or PUT ({} when empty, and for other methods), or the 400 that refuses it. */
async function readBody(req: IncomingMessage, method: string): Promise<Record<string, unknown> | ApiFailure> {
  if (method !== 'POST' && method !== 'PUT') return {};
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  // Request bodies are application/json (spec section 4). A body labelled otherwise is refused rather than read
  // anyway: a JSON parser in front of a real API leaves it unread, so a client that forgot the header would pass here only.
  if (!isJson(req.headers['content-type'])) return bad('a request body must be sent with content-type application/json');
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as Record<string, unknown>;
  } catch {
    return bad('body must be a JSON object');
  }
}

/** `application/json`, in any letter case, with or without parameters (`; charset=utf-8`). */
function isJson(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() === 'application/json';
}
