// What the soak and the chaos run share: replicas of the built remote service (packages/http/dist/cli.js)
// started, stopped and killed as child processes, their health, and how a call's failure is labelled.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SdkErrorCode } from '@modelcontextprotocol/client';

export const CLI = join(fileURLToPath(new URL('..', import.meta.url)), 'packages/http/dist/cli.js');

export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);
}
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const rssKB = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined;
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  } catch {
    return undefined;
  }
};

/** A short, stable label for an error: its kind, never ids or numbers that differ per call. */
export const label = (text: string) =>
  text
    .replace(/\s+/g, ' ')
    .replace(/[0-9a-f]{8,}/gi, '…')
    .replace(/\d+/g, '#')
    .slice(0, 90);

export function describeThrown(error: unknown): { kind: string; lost: boolean } {
  const failure = error as { name?: string; code?: unknown; status?: unknown; message?: string };
  if (failure?.code === SdkErrorCode.RequestTimeout) return { kind: 'no answer within 60 s (lost)', lost: true };
  if (typeof failure?.status === 'number') {
    // The answer's own message (a JSON-RPC error or the service's {error, message}), not the SDK's wrapping.
    const said = /"message":"((?:[^"\\]|\\.)*)"/.exec(failure.message ?? '')?.[1] ?? failure.message ?? '';
    return { kind: `HTTP ${failure.status}: ${label(said)}`, lost: false };
  }
  return {
    kind: `${failure?.name ?? 'Error'}${failure?.code !== undefined ? ` ${String(failure.code)}` : ''}: ${label(failure?.message ?? String(error))}`,
    lost: false,
  };
}

interface Life {
  pid: number;
  from: number;
  to?: number;
  samples: Array<{ at: number; kb: number }>;
}

export class Replica {
  child: ChildProcess | undefined;
  url = '';
  port = 0;
  readonly lives: Life[] = [];
  readonly levels: Record<string, number> = {};
  readonly notable: string[] = [];
  lastExit: { code: number | null; signal: NodeJS.Signals | null; drainMs: number } | undefined;
  /** Every stderr line, when set (the chaos run reads them all for keys). */
  onLine: ((line: string) => void) | undefined;

  constructor(
    readonly name: string,
    private readonly env: Record<string, string>,
    /** Seconds since the run began, for the lines it keeps. */
    private readonly elapsed: () => number,
  ) {}

  get pid(): number | undefined {
    const child = this.child;
    return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
  }

  async start(port = 0): Promise<void> {
    const child = spawn(process.execPath, [CLI], { env: { ...this.env, ENGAGE_HTTP_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    createInterface({ input: child.stderr! }).on('line', (line) => {
      this.onLine?.(line);
      let level = 'text';
      try {
        level = (JSON.parse(line) as { level?: string }).level ?? 'text';
      } catch {
        /* not JSON */
      }
      this.levels[level] = (this.levels[level] ?? 0) + 1;
      if (level !== 'info' && level !== 'debug' && this.notable.length < 40) this.notable.push(`${this.elapsed().toFixed(1)}s ${line.slice(0, 300)}`);
    });
    const url = await new Promise<string>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      const timer = setTimeout(() => reject(new Error(`${this.name} printed no URL within 20 s`)), 20_000);
      lines.once('line', (line) => {
        clearTimeout(timer);
        try {
          resolve((JSON.parse(line) as { url: string }).url);
        } catch {
          reject(new Error(`${this.name} printed ${line.slice(0, 200)} instead of {"url": …}`));
        }
      });
      child.once('exit', (code) => reject(new Error(`${this.name} exited (${code}) before listening: ${this.notable.slice(-3).join(' | ')}`)));
    });
    this.url = url;
    this.port = Number(new URL(url).port);
    for (let attempt = 0; ; attempt++) {
      if ((await status(`${url}/readyz`)) === 200) break;
      if (attempt > 100) throw new Error(`${this.name}: /readyz never answered 200`);
      await sleep(100);
    }
    this.lives.push({ pid: child.pid as number, from: this.elapsed(), samples: [] });
  }

  /** SIGTERM: the service drains and exits. SIGKILL: it is gone at once, its writes at the API unsettled. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || this.pid === undefined) return;
    const asked = Date.now();
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code, exitSignal) => {
        this.lastExit = { code, signal: exitSignal, drainMs: Date.now() - asked };
        resolve();
      }),
    );
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    await exited;
    clearTimeout(timer);
    const life = this.lives.at(-1);
    if (life) life.to = this.elapsed();
  }

  sample(): void {
    const life = this.lives.at(-1);
    const kb = rssKB(this.pid);
    if (life && kb !== undefined && life.to === undefined) life.samples.push({ at: this.elapsed(), kb });
  }
}

export function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    const request = get(url, { agent: false, timeout: 1_000 }, (answer) => {
      answer.resume();
      resolve(answer.statusCode ?? 0);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(0));
  });
}
