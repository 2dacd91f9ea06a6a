// Answering a request that an injected fault caught: each kind of Fault (see types.ts) as a
// misbehaving server or proxy would answer, doing the work or not as the kind says.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiFailure } from './failure.js';
import type { Headers, Outcome, Reply } from './reply.js';
import type { Fault } from './types.js';

export interface FaultedRequest {
  req: IncomingMessage;
  res: ServerResponse;
  reply: Reply;
  /** Carries the request out, once per call. */
  run: () => Outcome;
  /** Answers an outcome as the sandbox does without a fault. */
  answer: (outcome: Outcome) => void;
  rateHeaders: () => Headers;
  /** Records the status of an answer sent without `reply`. */
  setStatus: (status: number) => void;
}

const BAD_GATEWAY_PAGE = '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1><p>nginx</p></body></html>';

export async function answerWithFault(fault: Fault, request: FaultedRequest): Promise<void> {
  const { req, res, reply, run, rateHeaders } = request;
  switch (fault.kind) {
    case 'delay':
      // Like a real server, it does the work even if the client gave up waiting.
      await new Promise((resolve) => setTimeout(resolve, fault.delayMs ?? 1000));
      return request.answer(run());
    case 'status':
      if (fault.afterWork) run();
      return reply.fail(new ApiFailure(fault.status ?? 500, 50000, fault.message ?? 'injected failure'), rateHeaders());
    case 'html':
      if (fault.afterWork) run();
      res.writeHead(fault.status ?? 502, { 'content-type': 'text/html' });
      return void res.end(BAD_GATEWAY_PAGE);
    case 'reset-before':
      return void req.socket.destroy();
    case 'reset-after':
      run();
      return void req.socket.destroy();
    case 'truncated': {
      const full = envelopeText(run());
      res.writeHead(200, { 'content-type': 'application/json', ...rateHeaders() });
      return void res.end(full.slice(0, Math.max(1, Math.floor(full.length / 2))));
    }
    case 'not-envelope':
      run();
      return reply.send(200, { ok: true, result: 'done' }, rateHeaders());
    case 'slow-body':
      return trickle(res, envelopeText(run()), rateHeaders(), fault.delayMs ?? 2000);
    case 'rate-limit':
      return reply.fail(new ApiFailure(429, 42900, 'rate limit exceeded'), {
        ...rateHeaders(),
        'RateLimit-Remaining': 0,
        'Retry-After': fault.retryAfter ?? '1',
      });
    case 'redirect':
      request.setStatus(302);
      res.writeHead(302, { location: 'http://127.0.0.2:9/stolen' });
      return void res.end();
  }
}

/** The success envelope's text; an outcome that failed carries data null. */
function envelopeText(outcome: Outcome): string {
  return JSON.stringify({ status: 200, errorCode: 0, data: outcome.data ?? null });
}

/** Sends a 200 with `full` in ten pieces spread over `durationMs`, stopping if the client leaves. */
async function trickle(res: ServerResponse, full: string, headers: Headers, durationMs: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  const pieces = 10;
  const size = Math.ceil(full.length / pieces);
  for (let index = 0; index < pieces && !res.destroyed; index++) {
    res.write(full.slice(index * size, (index + 1) * size));
    await new Promise((resolve) => setTimeout(resolve, durationMs / pieces));
  }
  res.end();
}
