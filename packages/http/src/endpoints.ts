// The service's own endpoints beside MCP: /healthz (up), /readyz (ready, starting or draining) and
// /metrics (Prometheus text). The probes answer whatever the Host (a balancer may use an address)
// and say only up or not; /metrics is reached only past the Host and Origin guards.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Drain } from './drain.js';
import type { ServiceMetrics } from './metrics.js';
import { sendText } from './respond.js';

export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
export const OWN_PATHS: ReadonlySet<string> = new Set([...PROBE_PATHS, '/metrics']);

const READINESS = { ready: [200, 'ready\n'], draining: [503, 'draining\n'], starting: [503, 'starting\n'] } as const;

const readOnly = (req: IncomingMessage) => req.method === 'GET' || req.method === 'HEAD';

export function answerProbe(path: string, req: IncomingMessage, res: ServerResponse, drain: Drain): void {
  if (!readOnly(req)) sendText(res, 405, 'Method not allowed.\n');
  else if (path === '/healthz') sendText(res, 200, 'ok\n');
  else {
    const [status, text] = READINESS[drain.readiness];
    sendText(res, status, text);
  }
}

export async function answerMetrics(req: IncomingMessage, res: ServerResponse, metrics: ServiceMetrics): Promise<void> {
  if (!readOnly(req)) return sendText(res, 405, 'Method not allowed.\n');
  sendText(res, 200, await metrics.render(), metrics.contentType);
}
