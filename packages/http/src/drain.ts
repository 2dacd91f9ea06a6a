// Readiness and drain. After SIGTERM the replica first says "draining" on /readyz while it goes on
// serving (drainDelayMs, so a balancer takes it out of rotation before anything is refused), then
// refuses new requests and waits for the calls in flight (up to drainTimeoutMs).
import type { ServerResponse } from 'node:http';
import type { Logger } from '@engage-mcp/shared';

export class Drain {
  /** MCP requests in flight (2025 notification streams included). */
  inflight = 0;
  private ready = false;
  /** SIGTERM came: /readyz says 503 while calls are still served. */
  private leaving = false;
  private refusing = false;
  /** Calls (POSTs) in flight: what a drain waits for. */
  private active = 0;
  private drained: (() => void) | undefined;

  constructor(private readonly log: Logger) {}

  /** Whether new MCP requests are refused (503). */
  get draining(): boolean {
    return this.refusing;
  }

  get readiness(): 'ready' | 'draining' | 'starting' {
    if (this.leaving || this.refusing) return 'draining';
    return this.ready ? 'ready' : 'starting';
  }

  markReady(): void {
    this.ready = true;
  }

  /** Counts a request until its response closes; `isCall` ones are waited for by a drain. */
  track(res: ServerResponse, isCall: boolean): void {
    this.inflight++;
    if (isCall) this.active++;
    res.once('close', () => {
      this.inflight--;
      if (isCall) this.active--;
      if (this.active === 0) this.drained?.();
    });
  }

  /** Not ready any more, but still serving for delayMs. */
  async leave(delayMs: number): Promise<void> {
    this.leaving = true;
    if (delayMs <= 0) return;
    this.log.info(`not ready; serving ${delayMs} ms more before draining`);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }

  /** Refuses new requests and waits for the calls in flight, up to timeoutMs. */
  async drain(timeoutMs: number): Promise<void> {
    this.refusing = true;
    this.log.info(`draining: ${this.active} call(s) in flight`);
    if (this.active === 0) return;
    await new Promise<void>((resolve) => {
      this.drained = resolve;
      setTimeout(resolve, timeoutMs).unref();
    });
  }
}
