import type { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFingerprint } from '@engage-mcp/shared';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, textOf } from './helpers.js';
import { inMemoryTelemetry, withEditedCalls } from './telemetry-helpers.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const traceparent = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
const SERVER = 1; // SpanKind.SERVER

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox?.close());

/** Everything the finished spans hold that OTLP exports: names, attributes, status, their own and their parent's context (trace state included). */
const exported = (finished: ReadableSpan[]) =>
  JSON.stringify(
    finished.map((span) => [span.name, span.attributes, span.status, span.spanContext(), span.spanContext().traceState?.serialize(), span.parentSpanContext]),
  );

function expectNoKey(finished: ReadableSpan[], key: string): void {
  const text = exported(finished).toLowerCase();
  const secret = key.replace(/^eng_(live|test)_/, '');
  for (const form of [key, secret, Buffer.from(secret).toString('hex'), keyFingerprint(key).slice(0, 16)]) expect(text).not.toContain(form.toLowerCase());
}

/** A tracestate entry whose value is the key (a tracestate value is any printable ASCII but `,` and `=`). */
const stateWith = (key: string) => `rojo=00f067aa0ba902b7,vendor=${key}`;

describe('remote mode: the request key in the id or the trace context', () => {
  /** `send` re-sends one billing.quota call, edited, and expects it answered 200 (telemetry-helpers.ts). */
  const withService = (run: (send: (change: (body: any) => void) => Promise<string>, spans: InMemorySpanExporter) => Promise<void>) =>
    withEditedCalls(sandbox, 'review23d', (send, spans) =>
      run(async (change) => {
        const sent = await send(change);
        expect(sent.status).toBe(200);
        return sent.text;
      }, spans),
    );

  it('an id with the key is answered, and not recorded; the trace context still is', async () => {
    await withService(async (send, spans) => {
      const text = await send((body) => {
        body.id = `call-${sandbox.keys.full}`;
        body.params._meta.traceparent = traceparent;
      });
      expect(text).toContain('aiQuota');
      const finished = spans.getFinishedSpans();
      const root = finished.find((span) => span.kind === SERVER) as ReadableSpan;
      expect(root.name).toBe('tools/call billing_get');
      expect(root.attributes['jsonrpc.request.id']).toBeUndefined();
      expect(root.parentSpanContext?.spanId).toBe(CALLER_SPAN);
      expectNoKey(finished, sandbox.keys.full);
    });
  });

  it('a tracestate with the key is not taken (the traceparent is); a traceparent whose trace id is the key in hex starts a trace of its own', async () => {
    await withService(async (send, spans) => {
      await send((body) => {
        body.id = 'call-7';
        body.params._meta.traceparent = traceparent;
        body.params._meta.tracestate = stateWith(sandbox.keys.full);
      });
      let finished = spans.getFinishedSpans();
      expect(finished.length).toBeGreaterThanOrEqual(2); // the call and its API request
      for (const span of finished) {
        expect(span.spanContext().traceId).toBe(TRACE_ID);
        expect(span.spanContext().traceState).toBeUndefined();
      }
      expect(finished.find((span) => span.kind === SERVER)?.attributes['jsonrpc.request.id']).toBe('call-7');
      expectNoKey(finished, sandbox.keys.full);

      spans.reset();
      const hex = Buffer.from(sandbox.keys.full.replace(/^eng_(live|test)_/, ''))
        .toString('hex')
        .slice(0, 32);
      await send((body) => {
        body.params._meta.traceparent = `00-${hex}-${CALLER_SPAN}-01`;
      });
      finished = spans.getFinishedSpans();
      const root = finished.find((span) => span.kind === SERVER) as ReadableSpan;
      expect(root.parentSpanContext).toBeUndefined();
      expect(root.spanContext().traceId).not.toBe(hex);
      expectNoKey(finished, sandbox.keys.full);
    });
  });
});

describe('stdio: the configured key in the trace context', () => {
  it('a tracestate with the key is not taken; a usual one still is', async () => {
    const { telemetry, spans } = await inMemoryTelemetry('review23d');
    const server = await inProcess(DOMAINS.billing!, sandbox, { server: { telemetry } });
    try {
      const withKey = await server.client.callTool({
        name: 'billing_get',
        arguments: { operationId: 'billing.quota' },
        _meta: { traceparent, tracestate: stateWith(sandbox.keys.full) },
      } as never);
      expect(withKey.isError, textOf(withKey as never)).toBeFalsy();
      const finished = spans.getFinishedSpans();
      const root = finished.find((span) => span.kind === SERVER) as ReadableSpan;
      expect(root.parentSpanContext?.spanId).toBe(CALLER_SPAN);
      expect(root.spanContext().traceState).toBeUndefined();
      expectNoKey(finished, sandbox.keys.full);

      spans.reset();
      await server.client.callTool({
        name: 'billing_get',
        arguments: { operationId: 'billing.quota' },
        _meta: { traceparent, tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' },
      } as never);
      expect(
        spans
          .getFinishedSpans()
          .find((span) => span.kind === SERVER)
          ?.spanContext()
          .traceState?.serialize(),
      ).toBe('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    } finally {
      await server.close();
      await telemetry.shutdown();
    }
  });
});
