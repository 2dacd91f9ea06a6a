// review9 (hostile review of b620a0f): stdio's shutdown runs connection.close() and
// telemetry.shutdown() in writesSettled(...).then(...). That callback runs BEFORE register.ts's
// handle() resumes from `await registration.writes.during(running)`, so the waited-for write's
// span is ended (span?.end(reply) in handle's finally) after the tracer provider began shutting
// down, and its reply is handed to a transport already closed: the span of exactly the write the
// wait was for is dropped.
import { describe, expect, it } from 'vitest';
import { WritesInFlight } from '../shared/src/call/in-flight.js';

describe('review9: the order of a stopping stdio server', () => {
  it("the waited-for write's handler finishes (span ended, reply sent) before the shutdown callback runs", async () => {
    const writes = new WritesInFlight();
    const order: string[] = [];
    let finish!: (value: string) => void;
    const running = new Promise<string>((resolve) => (finish = resolve));
    // register.ts handle():
    const handle = (async () => {
      let reply: string | undefined;
      try {
        reply = await writes.during(running);
      } finally {
        order.push(`span.end(${reply})`);
      }
    })();
    // stdio.ts shutdown():
    const shut = writes.settled(10_000).then(() => order.push('connection.close + telemetry.shutdown'));
    finish('done');
    await Promise.all([handle, shut]);
    expect(order).toEqual(['span.end(done)', 'connection.close + telemetry.shutdown']);
  });
});
