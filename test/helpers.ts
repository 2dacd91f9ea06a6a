// Shared test harness: the catalogs, an in-process client/server pair against a sandbox, and
// small readers for tool results.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { createLogger, createServer, loadConfig, manifestOf, type Domain } from '@engage-mcp/shared';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../scripts/catalogs.js';

export const DOMAINS: Record<string, Domain> = Object.fromEntries(CATALOGS.map((domain) => [domain.name, domain]));
export const ALL_OPERATIONS = Object.values(DOMAINS).flatMap((domain) => domain.operations);

export function domainOf(operationId: string): Domain {
  return DOMAINS[operationId.split('.')[0] as string] as Domain;
}

export function toolOf(operationId: string): string {
  const domain = domainOf(operationId);
  return (domain.tools.find((tool) => tool.operations.some((op) => op.id === operationId)) as { name: string }).name;
}

export interface InProcess {
  client: Client;
  logs: string[];
  call(operationId: string, params?: Record<string, unknown>, extra?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

export interface InProcessOptions {
  env?: Record<string, string | undefined>;
  /** Declares elicitation and answers every request with this. */
  elicit?: (message: string) => ElicitResult | Promise<ElicitResult>;
}

/** A domain server in this process, over InMemoryTransport, against the sandbox. */
export async function inProcess(domain: Domain, sandbox: Pick<Sandbox, 'baseUrl' | 'keys'>, options: InProcessOptions = {}): Promise<InProcess> {
  const env = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ...options.env };
  const config = loadConfig(env, domain.name, domain.operations.map((op) => op.id));
  const logs: string[] = [];
  const log = createLogger(domain.name, 'debug', config.ok ? [config.config.apiKey] : [], (line) => logs.push(line) > 0);
  const engage = createServer(manifestOf(domain), async () => domain, config, { log });
  const client = new Client({ name: 'test', version: '0' }, { capabilities: options.elicit ? { elicitation: {} } : {} });
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (request) => answer(request.params.message));
  }
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await Promise.all([engage.server.connect(serverTransport), client.connect(clientTransport)]);
  return {
    client,
    logs,
    call: (operationId, params, extra = {}) =>
      client.callTool({ name: toolOf(operationId), arguments: { operationId, ...(params ? { params } : {}), ...extra } }) as Promise<CallToolResult>,
    close: async () => {
      await client.close();
      await engage.close();
    },
  };
}

export function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

export function structuredOf(result: CallToolResult): Record<string, unknown> {
  return (result.structuredContent ?? {}) as Record<string, unknown>;
}

export function countCarriedOut(sandbox: Sandbox, operationId: string): number {
  return sandbox.carriedOut().filter((entry) => entry.operationId === operationId).length;
}
