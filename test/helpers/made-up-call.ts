// A POST to remote mode with a made-up key, as a client with no key of a tenant floods it: its body
// can be left unfinished (trickled), so the call holds its place in flight until it is stopped.
import { request } from 'node:http';

export interface MadeUpCallOptions {
  /** Which made-up key (each index its own). */
  index: number;
  /** The client a proxy in front names (X-Forwarded-For). */
  forwardedFor: string;
  /** The socket's own address (127.0.0.x), when the client is to differ from the test's 127.0.0.1. */
  localAddress?: string;
  /** The body is never finished. */
  trickle: boolean;
  /** The body's declared length. */
  length?: number;
}

/** Resolves with the call's status, if answered; `stop` closes its connection. */
export function madeUpCall(
  url: URL,
  { index, forwardedFor, localAddress, trickle, length = 1000 }: MadeUpCallOptions,
): { status: Promise<number | undefined>; stop(): void } {
  const req = request(url, {
    method: 'POST',
    ...(localAddress ? { localAddress } : {}),
    headers: {
      'x-forwarded-for': forwardedFor,
      authorization: `Bearer eng_live_madeup_${String(index).padStart(4, '0')}_0123456789abcdef`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': String(length),
    },
  });
  const status = new Promise<number | undefined>((resolve) => {
    req.once('response', (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.once('error', () => resolve(undefined));
  });
  const head = '{"jsonrpc":"2.0",';
  req.write(head);
  if (!trickle) req.end(' '.repeat(length - head.length));
  return { status, stop: () => req.destroy() };
}
