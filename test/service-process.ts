// The built remote service (packages/http/dist/cli.js) as its own process, the way an operator runs
// it, and a 2026-07-28 client of one of its endpoints: what the process-level remote tests share.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client as ModernClient, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { MODERN_REVISION } from './helpers.js';

export interface ServiceProcess {
  child: ChildProcess;
  /** What it wrote to stderr (its log) so far, chunk by chunk. */
  stderr: string[];
  /** Its exit code, once it exits. */
  exit: Promise<number | null>;
  /** The URL it prints as its first line; rejects, with its stderr, if it exits first. */
  url: Promise<string>;
}

/** The service on a free port with `env` (and PATH, nothing else of this process's environment). */
export function launchService(env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ['packages/http/dist/cli.js'], {
    env: { PATH: process.env.PATH ?? '', ENGAGE_HTTP_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NonNullable<typeof child.stdout> }).once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
    void exit.then((code) => reject(new Error(`exited with ${code}: ${stderr.join('')}`)));
  });
  // A test that expects a refusal to start awaits `exit` alone; the URL's rejection is then no error.
  url.catch(() => undefined);
  return { child, stderr, exit, url };
}

/** SIGTERM (or `signal`), and wait for the exit. */
export async function stopService(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

export interface ModernClientOptions {
  domain?: string;
  /** How the client introduces itself (the audit record keeps it). */
  info?: { name: string; version: string };
  /** More of the SDK client's options: capabilities, inputRequired, … */
  options?: Record<string, unknown>;
  /** The fetch the transport uses (e.g. one whose connection a test drops). */
  fetch?: typeof fetch;
}

/** A 2026-07-28 client of `/mcp/<domain>` (channel unless named) at `url`, with `key` as its bearer. */
export async function modernClient(url: string, key: string, { domain = 'channel', info, options, fetch }: ModernClientOptions = {}): Promise<ModernClient> {
  const made = new ModernClient(info ?? { name: 'test', version: '0' }, {
    capabilities: {},
    ...options,
    versionNegotiation: { mode: { pin: MODERN_REVISION } },
  } as never);
  const headers = { authorization: `Bearer ${key}` };
  await made.connect(new V2HttpTransport(new URL(`/mcp/${domain}`, url), { requestInit: { headers }, ...(fetch ? { fetch } : {}) }));
  return made;
}
