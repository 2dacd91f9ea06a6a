// The stdio entry every domain's bin calls: read the environment, start the server, and exit
// promptly and cleanly when the host goes away. Only JSON-RPC reaches stdout.
import type { Domain } from './catalog.js';
import { loadConfig, loadDotenvSafely } from './config.js';
import { createLogger } from './log.js';
import type { DomainManifest } from './manifest.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { MessageTransport } from './protocol.js';
import { createServer } from './server.js';

/** A line longer than this (16 MiB) is dropped unread; no request needs more. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Newline-delimited JSON-RPC over this process's stdin and stdout, as MCP's stdio transport is. */
export class StdioTransport implements MessageTransport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private buffer: Buffer = Buffer.alloc(0);
  private discarding = false;

  async start(): Promise<void> {
    process.stdin.on('data', (chunk: Buffer) => this.receive(chunk));
    process.stdin.on('error', (error) => this.onerror?.(error));
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const line = `${JSON.stringify(message)}\n`;
    if (!process.stdout.write(line)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  }

  async close(): Promise<void> {
    process.stdin.pause();
    this.onclose?.();
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let newline: number;
    while ((newline = this.buffer.indexOf(10)) >= 0) {
      const line = this.buffer.subarray(0, newline).toString('utf8').replace(/\r$/, '');
      this.buffer = this.buffer.subarray(newline + 1);
      if (this.discarding) {
        this.discarding = false;
        continue;
      }
      if (line.trim() === '') continue;
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch (error) {
        this.onerror?.(error as SyntaxError);
        continue;
      }
      // Shape is checked by the session, which answers malformed messages with an error.
      this.onmessage?.(message as JSONRPCMessage);
    }
    if (this.buffer.length > MAX_LINE_BYTES) {
      this.buffer = Buffer.alloc(0);
      this.discarding = true;
      this.onerror?.(new Error(`a message longer than ${MAX_LINE_BYTES} bytes was dropped`));
    }
  }
}

export async function runStdioServer(manifest: DomainManifest, loadCatalog: () => Promise<Domain>): Promise<void> {
  // A .env in the working directory fills in what the host's environment does not set (never the safety settings).
  const dotenv = loadDotenvSafely(process.env, process.cwd());
  Object.assign(process.env, dotenv.values);
  const operationIds = manifest.tools.flatMap((tool) => tool.operations.map((op) => op.id));
  const result = loadConfig(process.env, manifest.name, operationIds);
  const level = result.ok ? result.config.logLevel : result.logLevel;
  const log = createLogger(`engage-mcp-${manifest.name}`, level, result.ok ? [result.config.apiKey] : []);
  for (const warning of dotenv.warnings) log.error(warning);
  if (!result.ok) {
    log.error(`not configured; every tool call will answer with this until it is fixed: ${result.problems.join(' ')}`);
  }

  const engage = createServer(manifest, loadCatalog, result, { log });
  let closing = false;
  const shutdown = (why: string) => {
    if (closing) return;
    closing = true;
    log.info(`shutting down: ${why}`);
    // Whatever is in flight (a rate-limit wait, a request) must not keep the process alive.
    setTimeout(() => process.exit(0), 500).unref();
    engage.close().finally(() => process.exit(0));
  };
  process.stdin.on('end', () => shutdown('stdin closed'));
  process.stdin.on('close', () => shutdown('stdin closed'));
  process.stdout.on('error', () => shutdown('stdout closed'));
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));
  // A server must outlive any one bad request.
  process.on('uncaughtException', (error) => log.error(`uncaught: ${error.stack ?? error.message}`));
  process.on('unhandledRejection', (reason) => log.error(`unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));

  await engage.server.connect(new StdioTransport());
  log.info(`ready: ${engage.tools.map(({ info }) => info.name).join(', ')}`);
}
