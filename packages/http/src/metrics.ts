// Prometheus metrics through prom-client: ours, with a small fixed set of label values (endpoints,
// domains, outcomes, reasons), beside the standard process and Node ones (CPU, memory, event loop
// lag, GC). Never a key, a fingerprint, params or customer data: nothing a request sends becomes a
// label value except through a fixed list.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Latency buckets in seconds, from a cached read to a slow write behind retries. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface ServiceMetrics {
  requests: Counter<'endpoint' | 'status'>;
  latency: Histogram<'endpoint'>;
  calls: Counter<'domain' | 'outcome'>;
  callLatency: Histogram<'domain'>;
  throttled: Counter;
  refused: Counter<'reason'>;
  confirmations: Counter<'outcome'>;
  /** The text exposition of every metric. */
  render(): Promise<string>;
  contentType: string;
}

export interface MetricReadings {
  inflight(): number;
  sessionsOpen(): number;
}

export function createServiceMetrics(readings: MetricReadings): ServiceMetrics {
  // A registry per service, not prom-client's global one: tests run several services in one process.
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  gauge('engage_http_inflight', 'MCP requests in flight.', readings.inflight);
  gauge('engage_sessions_open', 'Open 2025-era sessions.', readings.sessionsOpen);
  return {
    requests: new Counter({ name: 'engage_http_requests_total', help: 'HTTP requests by endpoint and status.', labelNames: ['endpoint', 'status'], registers }),
    latency: new Histogram({
      name: 'engage_http_request_duration_seconds',
      help: 'HTTP request latency by endpoint.',
      labelNames: ['endpoint'],
      buckets: BUCKETS,
      registers,
    }),
    calls: new Counter({ name: 'engage_tool_calls_total', help: 'Tool calls by domain and outcome.', labelNames: ['domain', 'outcome'], registers }),
    callLatency: new Histogram({
      name: 'engage_tool_call_duration_seconds',
      help: 'Tool call latency by domain.',
      labelNames: ['domain'],
      buckets: BUCKETS,
      registers,
    }),
    throttled: new Counter({ name: 'engage_http_throttled_total', help: 'Requests answered 429 (per-key concurrency limit).', registers }),
    refused: new Counter({ name: 'engage_http_refused_total', help: 'Requests refused before MCP, by reason.', labelNames: ['reason'], registers }),
    confirmations: new Counter({
      name: 'engage_confirmations_total',
      help: 'Confirmation tokens and requestStates presented, by outcome (redeemed: first use; replayed: refused).',
      labelNames: ['outcome'],
      registers,
    }),
    render: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
