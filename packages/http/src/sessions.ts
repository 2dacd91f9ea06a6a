// 2025-era sessions: the SDK's web-standard transport per session, each bound to the key that
// opened it (by fingerprint) and to its endpoint, closed after sessionIdleMs without a request.
import { randomUUID } from 'node:crypto';
import { type McpServer, WebStandardStreamableHTTPServerTransport, type AuthInfo } from '@modelcontextprotocol/server';
import { refusalResponse } from './respond.js';

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  mcp: McpServer;
  /** The authInfo's clientId that opened it: the key's fingerprint, or an OAuth grant's `<fingerprint>:grant:<id>`. Only it is served. */
  clientId: string;
  /** The key's fingerprint, whichever grant it came through: what the limits count, and what the API accepted or not. */
  keyId: string;
  endpoint: string;
  /** The client address group that opened it (authInfo.extra.requester): sessions of keys not yet accepted are shared by it. */
  requester: string;
  lastSeen: number;
  /** The ids of the client's requests the session's server has not answered yet (callIdOf). */
  calls: Set<string>;
}

/** Where a legacy request goes: its endpoint's name, and how to make that endpoint's server. */
export interface LegacyTarget {
  name: string;
  factory: (era: 'legacy', authInfo?: AuthInfo) => McpServer;
}

export interface SessionLimits {
  /** Sessions of keys the API has accepted (fairness.ts), all keys together: more are refused. */
  maxSessions: number;
  /** Sessions of one key: a new one closes that key's least recently used. */
  maxSessionsPerKey: number;
  /** Sessions of keys the API has not accepted yet (new or made-up keys): a new one closes the least recently used of them. */
  maxUnacceptedSessions: number;
  sessionIdleMs: number;
  maxBodyBytes: number;
}

const NOT_FOUND = { status: 404, error: 'session_not_found', message: 'Session not found: start a new session (initialize).' };
const OTHER_KEY = {
  status: 403,
  error: 'session_key',
  message: 'This session was opened with another API key: a session serves only the key that opened it. Start a new session with this key.',
};
/** The same key through another connection (another OAuth grant, or the key sent itself): not "another API key". */
const OTHER_CONNECTION = {
  status: 403,
  error: 'session_key',
  message:
    'This session was opened through another connection of the same API key (another OAuth sign-in, or the key sent itself): a session serves only the connection that opened it. Start a new session with this one.',
};
const NO_SESSION = { status: 400, error: 'no_session', message: 'Bad Request: no session; a 2025-era client starts with initialize.' };
const SAME_ID = {
  status: 409,
  error: 'request_id_in_use',
  message:
    'A request with this JSON-RPC id is still being answered in this session: nothing was run. Give every request of a session its own id; repeat this one with a new id.',
};
const TOO_MANY = { status: 503, error: 'too_many_sessions', message: 'Too many open sessions; try again later.', headers: { 'retry-after': '30' } };

export class Sessions {
  private readonly open = new Map<string, Session>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly limits: SessionLimits,
    /** A request came on a session opened with another key or another sign-in of it (it is refused). */
    private readonly onOtherKey: (authInfo: AuthInfo) => void,
    /** Has the API accepted this key (answered it with anything but 401, 429 or a 5xx)? Only then do its sessions count against maxSessions. */
    private readonly isAccepted: (keyId: string) => boolean = () => true,
  ) {
    this.sweep = setInterval(() => this.closeIdle(), Math.min(60_000, limits.sessionIdleMs)).unref();
  }

  get size(): number {
    return this.open.size;
  }

  /** A legacy request: to its session, or (an initialize) to a new one. `body`: the POST's body, parsed (undefined if none or not JSON). */
  async serve(request: Request, target: LegacyTarget, authInfo: AuthInfo, body?: unknown): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    if (!sessionId) return this.start(request, target, authInfo);
    const session = this.open.get(sessionId);
    if (!session || session.endpoint !== target.name) return refusalResponse(NOT_FOUND);
    if (session.clientId !== authInfo.clientId) {
      this.onOtherKey(authInfo);
      return refusalResponse(keyIdOf(authInfo.clientId) === session.keyId ? OTHER_CONNECTION : OTHER_KEY);
    }
    session.lastSeen = Date.now();
    const ids = takeCallIds(session.calls, body);
    if (!ids) return refusalResponse(SAME_ID);
    let response: Response | undefined;
    try {
      response = await session.transport.handleRequest(request, { authInfo });
      return response;
    } finally {
      // Refused by the transport (its headers, its body): the session's server never saw the request.
      if (response?.status !== 200) for (const id of ids) session.calls.delete(id);
    }
  }

  private async start(request: Request, target: LegacyTarget, authInfo: AuthInfo): Promise<Response> {
    if (request.method !== 'POST') return refusalResponse(NO_SESSION);
    const keyId = keyIdOf(authInfo.clientId);
    const requester = typeof authInfo.extra?.requester === 'string' ? authInfo.extra.requester : 'unknown';
    if (!this.makeRoom(keyId, requester)) return refusalResponse(TOO_MANY);
    const mcp = target.factory('legacy', authInfo);
    let opened: string | undefined;
    const calls = new Set<string>();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: this.limits.maxBodyBytes,
      onsessioninitialized: (id) => {
        opened = id;
        this.open.set(id, { transport, mcp, clientId: authInfo.clientId, keyId, endpoint: target.name, requester, lastSeen: Date.now(), calls });
      },
      onsessionclosed: (id) => void this.close(id),
    } as ConstructorParameters<typeof WebStandardStreamableHTTPServerTransport>[0]);
    releaseOnAnswer(transport, calls);
    await mcp.connect(transport);
    const response = await transport.handleRequest(request, { authInfo });
    if (opened === undefined) void mcp.close().catch(() => undefined); // not an initialize: nothing to keep
    return response;
  }

  /**
   * Room for one more session of this key: a key at its own bound gives up its least recently
   * used session; a key the API has not accepted yet takes the place of the least recently used
   * of such keys' sessions opened from the client address holding the most of them (made-up keys
   * push out only each other's, and one client's flood its own: right after a deploy every tenant
   * is among them, its session idle until the person's first call). When every accepted place is
   * taken, the key holding the most gives up its least recently used one to a key holding at least
   * two fewer: one tenant's many keys cannot keep every other tenant out. A session with a call in
   * flight is given up last (its call would never be answered), and never for another key: with
   * none of that key's idle, the new session is refused. False: no such key, or no idle session.
   */
  private makeRoom(keyId: string, requester: string): boolean {
    const own = [...this.open].filter(([, session]) => session.keyId === keyId);
    if (own.length >= this.limits.maxSessionsPerKey) void this.close(leastRecentlyUsedIdleFirst(own));
    if (!this.isAccepted(keyId)) {
      const unaccepted = [...this.open].filter(([, session]) => !this.isAccepted(session.keyId));
      if (unaccepted.length >= this.limits.maxUnacceptedSessions) void this.close(leastRecentlyUsedIdleFirst(ofBusiestRequester(unaccepted, requester)));
      return true;
    }
    const byKey = new Map<string, Array<[string, Session]>>();
    let accepted = 0;
    for (const entry of this.open) {
      if (!this.isAccepted(entry[1].keyId)) continue;
      accepted++;
      const ofKey = byKey.get(entry[1].keyId);
      if (ofKey) ofKey.push(entry);
      else byKey.set(entry[1].keyId, [entry]);
    }
    if (accepted < this.limits.maxSessions) return true;
    const largest = [...byKey.values()].reduce((most, each) => (each.length > most.length ? each : most), []);
    if (largest.length <= (byKey.get(keyId)?.length ?? 0) + 1) return false;
    const idle = largest.filter(([, session]) => session.calls.size === 0);
    if (idle.length === 0) return false;
    void this.close(leastRecentlyUsed(idle));
    return true;
  }

  async close(id: string): Promise<void> {
    const session = this.open.get(id);
    if (!session) return;
    this.open.delete(id);
    await session.mcp.close().catch(() => undefined);
  }

  /** Stops the idle sweep and closes every session. */
  async closeAll(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.allSettled([...this.open.keys()].map((id) => this.close(id)));
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const [id, session] of this.open) if (now - session.lastSeen > this.limits.sessionIdleMs) void this.close(id);
  }
}

/**
 * A request's id as the SDK keys it (a number and a string of the same digits are two ids).
 * While one is in flight, a second request with the same id in the same session would take its
 * place in the SDK's maps: the first call's answer went to no one (its POST held open until the
 * deadline, a write's outcome never told) and a cancel of that id stopped the second.
 */
function callIdOf(id: unknown): string {
  return `${typeof id}:${String(id)}`;
}

/** The body's request ids, now marked in flight; undefined (none marked) when one of them already is. */
function takeCallIds(calls: Set<string>, body: unknown): string[] | undefined {
  const messages = Array.isArray(body) ? body : [body];
  const ids: string[] = [];
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue;
    const { method, id, params } = message as { method?: unknown; id?: unknown; params?: { requestId?: unknown } };
    if (typeof method !== 'string') continue;
    // A cancel: the SDK sends no answer to a cancelled request, so its id is free again.
    if (method === 'notifications/cancelled' && params?.requestId !== undefined) calls.delete(callIdOf(params.requestId));
    if (id !== undefined && id !== null) ids.push(callIdOf(id));
  }
  if (ids.some((id) => calls.has(id)) || new Set(ids).size < ids.length) return undefined;
  for (const id of ids) calls.add(id);
  return ids;
}

/** Frees a request's id once the session's server has sent its answer (a result or an error). */
function releaseOnAnswer(transport: WebStandardStreamableHTTPServerTransport, calls: Set<string>): void {
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    try {
      return await send(message, options);
    } finally {
      if (!('method' in message) && 'id' in message) calls.delete(callIdOf(message.id));
    }
  };
}

/**
 * The key's fingerprint in an authInfo's clientId: the clientId itself for a key sent with the
 * request, the part before `:grant:` for an OAuth access token (oauth/index.ts). A key signed in
 * through several grants is one key to the limits (else each grant had maxSessionsPerKey of its
 * own), and one the API has accepted (the fairness knows keys by fingerprint).
 */
function keyIdOf(clientId: string): string {
  return clientId.split(':')[0] as string;
}

/** The sessions opened from the client address that opened the most of them (on a tie, the newcomer's own). */
function ofBusiestRequester(sessions: Array<[string, Session]>, newcomer: string): Array<[string, Session]> {
  const byRequester = new Map<string, Array<[string, Session]>>([[newcomer, []]]);
  for (const entry of sessions) {
    const group = byRequester.get(entry[1].requester);
    if (group) group.push(entry);
    else byRequester.set(entry[1].requester, [entry]);
  }
  const busiest = [...byRequester.values()].reduce((most, each) => (each.length > most.length ? each : most));
  return busiest.length > 0 ? busiest : sessions;
}

function leastRecentlyUsed(sessions: Array<[string, Session]>): string {
  return sessions.reduce((oldest, each) => (each[1].lastSeen < oldest[1].lastSeen ? each : oldest))[0];
}

/** The least recently used session with no call in flight, the least recently used of all if every one has one. */
function leastRecentlyUsedIdleFirst(sessions: Array<[string, Session]>): string {
  const idle = sessions.filter(([, session]) => session.calls.size === 0);
  return leastRecentlyUsed(idle.length > 0 ? idle : sessions);
}
