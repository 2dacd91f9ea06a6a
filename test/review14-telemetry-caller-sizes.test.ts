// Review 14, telemetry and a hostile caller in remote mode: what a tools/call request names of
// itself went into its span whatever its size. The JSON-RPC id (the caller's to choose, up to the
// 4 MiB body) was copied whole into `jsonrpc.request.id`, so exported to the collector as it was,
// and a `params._meta.tracestate` of any length stayed in the span's context (OpenTelemetry keeps
// the raw text, using 512 characters of it) until the span was exported: with the batch queue's
// 2,048 spans, megabytes each. A caller's id and trace context are now taken only at sizes they
// have in earnest; the call itself is answered as before.
import type { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { withEditedCalls } from './telemetry-helpers.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const traceparent = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
const MEGABYTE = 1024 * 1024;
const SERVER = 1; // SpanKind.SERVER

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox?.close());

/** A remote service with in-memory telemetry; `send` re-sends one billing.quota call, edited (telemetry-helpers.ts). */
const withService = (run: Parameters<typeof withEditedCalls>[2]) => withEditedCalls(sandbox, 'review14', run);

const serverSpans = (spans: InMemorySpanExporter) => spans.getFinishedSpans().filter((span) => span.kind === SERVER);
/** What the finished spans hold: names, attributes, their own and their parent's context (the trace state's text included). */
const heldBy = (spans: InMemorySpanExporter) =>
  JSON.stringify(spans.getFinishedSpans().map((span) => [span.name, span.attributes, span.spanContext(), span.parentSpanContext, span.status]));

describe("a remote caller's id and trace context, at sizes no caller needs", () => {
  it('a 1 MB JSON-RPC id is answered, and not kept in the span', async () => {
    await withService(async (send, spans) => {
      const sent = await send((body) => {
        body.id = `+6281234567890-${'x'.repeat(MEGABYTE)}`;
        body.params._meta.traceparent = traceparent;
      });
      expect(sent.status).toBe(200);
      expect(sent.text).toContain('aiQuota');
      const [root] = serverSpans(spans);
      expect(root?.name).toBe('tools/call billing_get');
      expect(root?.parentSpanContext?.spanId).toBe(CALLER_SPAN);
      expect(heldBy(spans).length).toBeLessThan(16 * 1024);
    });
  });

  it('a 1 MB tracestate is answered, and not kept in the span; a usual one still is', async () => {
    await withService(async (send, spans) => {
      const huge = Array.from({ length: MEGABYTE / 16 }, (_, index) => `k${index}=v${index}`.padEnd(15, 'x')).join(',');
      const sent = await send((body) => {
        body.params._meta.traceparent = traceparent;
        body.params._meta.tracestate = huge;
      });
      expect(sent.status).toBe(200);
      expect(sent.text).toContain('aiQuota');
      const [root] = serverSpans(spans);
      expect(root?.spanContext().traceId).toBe(TRACE_ID);
      expect(heldBy(spans).length).toBeLessThan(16 * 1024);

      spans.reset();
      await send((body) => {
        body.params._meta.traceparent = traceparent;
        body.params._meta.tracestate = 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE';
      });
      expect(serverSpans(spans)[0]?.spanContext().traceState?.serialize()).toBe('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    });
  });

  it('a usual id is still recorded as it was', async () => {
    await withService(async (send, spans) => {
      await send((body) => {
        body.id = 'call-7';
      });
      expect(serverSpans(spans)[0]?.attributes['jsonrpc.request.id']).toBe('call-7');
    });
  });
});
