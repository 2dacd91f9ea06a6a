// Launches a built domain server over stdio and connects an SDK client to it, as a host does.
// Used by the demo, the end-to-end tests and the benchmark.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

export const DOMAINS = ['contact', 'campaign', 'inbox', 'channel', 'product', 'billing', 'tenant'] as const;
export type DomainName = (typeof DOMAINS)[number];

/** The built entry of a domain server, found from this package's own location (src or dist). */
export function serverEntry(domain: DomainName): string {
  return fileURLToPath(new URL(`../../${domain}/dist/index.js`, import.meta.url));
}

export interface LaunchedServer {
  client: Client;
  transport: StdioClientTransport;
  /** What the server wrote to stderr so far. */
  stderr: () => string;
  close(): Promise<void>;
}

let stateDir: string | undefined;
/**
 * The guardrails' state of servers launched here: one temporary directory per launching process,
 * never the user's own, removed when that process exits (it holds an audit secret; a demo or test
 * run left one behind each time).
 */
function launchState(): string {
  if (stateDir) return stateDir;
  const made = mkdtempSync(join(tmpdir(), 'engage-mcp-state-'));
  process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  stateDir = made;
  return made;
}

export async function launchServer(
  domain: DomainName,
  env: Record<string, string>,
  clientOptions: ClientOptions = { capabilities: {} },
): Promise<LaunchedServer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [serverEntry(domain)],
    env: { ...getDefaultEnvironment(), ...env, ENGAGE_STATE_DIR: env.ENGAGE_STATE_DIR ?? launchState() },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'engage-mcp-launcher', version: '0.1.0' }, clientOptions);
  await client.connect(transport);
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}
