// Review 22b: single use (codes, refresh tokens) when the real redis-server stalls as a token is
// claimed (SIGSTOP). The claim is a SET NX; when the stall outlasts the command timeout, the
// token endpoint answers 503 "try again" (true: no tokens were issued), and Redis applies the
// SET it held once it resumes. Before, the client's retry, as a 503 invites, then found its own
// claim and was taken for a thief: "the refresh token was already used; the grant is revoked"
// (the person signed out, and the operator's log warning of a leaked token), and likewise "the
// code was already used; the grant it made is revoked" for a code exchange.
//
// Review 22c: single use (codes, refresh tokens) when Redis stalls just after the claim. Review
// 22b took back a claim whose own reply a stall lost; but the claim is only the first of the
// writes a refresh or a code exchange makes: when a later one (the new access token's record)
// stalls past the command timeout, the token endpoint answers 503 "try again" (true: no tokens
// were issued), and the claim, which Redis did answer, stayed. The client's retry, as a 503
// invites, was then taken for a second use: "the refresh token was already used; the grant is
// revoked" (the person signed out), or "the code was already used; the grant it made is revoked".
// A claim whose use ended in an error before any token was given is taken back now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { RedisOAuthStore } from '../packages/http/src/oauth/index.js';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import type { Service } from '../packages/http/src/service.js';
import { REDIRECT, authorizeUrl, mcpStatus, openConsent, pkce, postConsent, register, signIn, tokenRequest } from './oauth-helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { serveOAuth } from './review3-helpers.js';
import { QUICK_CONNECTION, sleep } from './review22b-stalling.js';

let sandbox: Sandbox;
let redis: RedisServer;
let real: RedisClient;
let service: Service;
const logs: string[] = [];
/** The next SET of a key with this part pauses Redis for 600 ms (the command times out after 300). */
let stallOn: string | undefined;
let resumed: Promise<void> = Promise.resolve();

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
  real = await connectRedis(redis.url, () => {}, QUICK_CONNECTION);
  const stalling: RedisClient = {
    command(args) {
      if (stallOn !== undefined && args[0] === 'SET' && String(args[1]).includes(stallOn)) {
        stallOn = undefined;
        const pid = redis.pid as number;
        process.kill(pid, 'SIGSTOP');
        resumed = sleep(600).then(() => void process.kill(pid, 'SIGCONT'));
      }
      return real.command(args);
    },
    close: () => real.close(),
  };
  service = await serveOAuth(sandbox, logs, { store: new RedisOAuthStore(stalling) });
}, 30_000);
afterAll(async () => {
  await service?.close();
  await real?.close();
  await redis?.stop();
  await sandbox?.close();
});

/** Asked again until Redis answers (the connection is being made again): a 503 says nothing was issued. */
async function untilAnswered(ask: () => Promise<{ status: number; body: Record<string, unknown> }>) {
  await resumed;
  for (let tries = 0; ; tries++) {
    const answer = await ask();
    if (answer.status !== 503 || tries > 100) return answer;
    await sleep(50);
  }
}

describe('review22b: a claim Redis applied late is not a second use', () => {
  it('a refresh answered 503 in a stall, asked again, gets new tokens; the grant stands', async () => {
    const tokens = await signIn(service.url, sandbox.keys.full);
    const refresh = () => tokenRequest(service.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh, client_id: tokens.clientId });
    stallOn = 'rtused:';
    const stalled = await refresh();
    expect(stalled.status, JSON.stringify(stalled.body)).toBe(503);
    const again = await untilAnswered(refresh);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${again.body.access_token as string}`)).status).not.toBe(401);
    expect(logs.join('\n')).not.toMatch(/used again; its grant is revoked/);
  });

  it('a code exchange answered 503 in a stall, asked again, gets its tokens', async () => {
    const { client_id: clientId } = await register(service.url);
    const { verifier, challenge } = pkce();
    const resource = `${service.url}/mcp`;
    const page = await openConsent(authorizeUrl(service.url, { clientId, challenge, resource }));
    const answer = await postConsent(service.url, page, { key: sandbox.keys.full, scopes: ['contact.read'] });
    const code = new URL(answer.location ?? 'http://x/').searchParams.get('code') as string;
    const exchange = () =>
      tokenRequest(service.url, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, client_id: clientId, resource });
    stallOn = 'codeused:';
    const stalled = await exchange();
    expect(stalled.status, JSON.stringify(stalled.body)).toBe(503);
    const again = await untilAnswered(exchange);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  });
});

describe('review22c: a claim whose tokens were never issued is not a second use', () => {
  it('a refresh answered 503 when the new token’s record stalled, asked again, gets new tokens; the grant stands', async () => {
    const tokens = await signIn(service.url, sandbox.keys.full);
    const refresh = () => tokenRequest(service.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh, client_id: tokens.clientId });
    stallOn = ':at:';
    const stalled = await refresh();
    expect(stalled.status, JSON.stringify(stalled.body)).toBe(503);
    const again = await untilAnswered(refresh);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${again.body.access_token as string}`)).status).not.toBe(401);
    expect(logs.join('\n')).not.toMatch(/used again; its grant is revoked/);
  });

  it('a code exchange answered 503 when the first token’s record stalled, asked again, gets its tokens', async () => {
    const { client_id: clientId } = await register(service.url);
    const { verifier, challenge } = pkce();
    const resource = `${service.url}/mcp`;
    const page = await openConsent(authorizeUrl(service.url, { clientId, challenge, resource }));
    const answer = await postConsent(service.url, page, { key: sandbox.keys.full, scopes: ['contact.read'] });
    const code = new URL(answer.location ?? 'http://x/').searchParams.get('code') as string;
    const exchange = () =>
      tokenRequest(service.url, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, client_id: clientId, resource });
    stallOn = ':at:';
    const stalled = await exchange();
    expect(stalled.status, JSON.stringify(stalled.body)).toBe(503);
    const again = await untilAnswered(exchange);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  });

  it('a consent answered "something went wrong; try again" when the grant’s record stalled, sent again, gives its code', async () => {
    const { client_id: clientId } = await register(service.url);
    const { challenge } = pkce();
    const page = await openConsent(authorizeUrl(service.url, { clientId, challenge, resource: `${service.url}/mcp` }));
    const consent = () => postConsent(service.url, page, { key: sandbox.keys.full, scopes: ['contact.read'] });
    stallOn = ':grant:';
    const stalled = await consent();
    expect(stalled.status, stalled.html).toBe(500);
    expect(stalled.html).toMatch(/try again/);
    await resumed;
    let again = await consent();
    for (let tries = 0; again.status === 500 && tries < 100; tries++) {
      await sleep(50);
      again = await consent();
    }
    expect(again.status, again.html).toBe(303);
    expect(new URL(again.location ?? 'http://x/').searchParams.get('code')).toBeTruthy();
  });
});
