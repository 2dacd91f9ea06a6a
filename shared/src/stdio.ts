// The stdio entry every domain's bin calls: read the environment, serve both protocol eras with
// the SDK's stdio entry, and exit promptly and cleanly when the host goes away. Only the
// protocol reaches stdout.
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { config as loadDotenv } from 'dotenv';
import type { Domain } from './catalog.js';
import { loadConfig } from './config.js';
import { createLogger } from './log.js';
import type { DomainManifest } from './manifest.js';
import { createServer } from './server.js';

export async function runStdioServer(manifest: DomainManifest, loadCatalog: () => Promise<Domain>): Promise<void> {
  // A .env in the working directory fills in what the host's environment does not set.
  loadDotenv({ quiet: true });
  const operationIds = manifest.tools.flatMap((tool) => tool.operations.map((op) => op.id));
  const result = loadConfig(process.env, manifest.name, operationIds);
  const level = result.ok ? result.config.logLevel : result.logLevel;
  const log = createLogger(`engage-mcp-${manifest.name}`, level, result.ok ? [result.config.apiKey] : []);
  if (!result.ok) {
    log.error(`not configured; every tool call will answer with this until it is fixed: ${result.problems.join(' ')}`);
  }

  const engage = createServer(manifest, loadCatalog, result, { log });
  // One SDK server per connection; the opening message picks the era (2026-07-28 or 2025).
  const connection = serveStdio(() => engage.createMcpServer(), { onerror: (error) => log.warn(`protocol: ${error.message}`) });
  let closing = false;
  const shutdown = (why: string) => {
    if (closing) return;
    closing = true;
    log.info(`shutting down: ${why}`);
    // Whatever is in flight (a rate-limit wait, a request) must not keep the process alive.
    setTimeout(() => process.exit(0), 500).unref();
    Promise.allSettled([connection.close(), engage.close()]).finally(() => process.exit(0));
  };
  process.stdin.on('end', () => shutdown('stdin closed'));
  process.stdin.on('close', () => shutdown('stdin closed'));
  process.stdout.on('error', () => shutdown('stdout closed'));
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));
  // A server must outlive any one bad request.
  process.on('uncaughtException', (error) => log.error(`uncaught: ${error.stack ?? error.message}`));
  process.on('unhandledRejection', (reason) => log.error(`unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));
  log.info(`ready: ${engage.tools.map(({ info }) => info.name).join(', ')}`);
}
