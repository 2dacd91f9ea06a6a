// The stdio entry every domain's bin calls: read the environment, start the server, and exit
// promptly and cleanly when the host goes away. Only JSON-RPC reaches stdout.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { config as loadDotenv } from 'dotenv';
import type { Domain } from './catalog.js';
import { loadConfig } from './config.js';
import { createLogger } from './log.js';
import { createServer } from './server.js';

export async function runStdioServer(domain: Domain): Promise<void> {
  // A .env in the working directory fills in what the host's environment does not set.
  loadDotenv({ quiet: true });
  const result = loadConfig(process.env, domain.name, domain.operations.map((op) => op.id));
  const level = result.ok ? result.config.logLevel : result.logLevel;
  const log = createLogger(`engage-mcp-${domain.name}`, level, result.ok ? [result.config.apiKey] : []);
  if (!result.ok) {
    log.error(`not configured; every tool call will answer with this until it is fixed: ${result.problems.join(' ')}`);
  }

  const engage = createServer(domain, result, { log });
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

  const transport = new StdioServerTransport();
  transport.onerror = (error) => log.warn(`transport: ${error.message}`);
  await engage.server.connect(transport);
  log.info(`ready: ${engage.tools.map(({ spec }) => spec.name).join(', ')}`);
}
