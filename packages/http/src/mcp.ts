// The MCP face: `/mcp/<domain>` serves one domain's tools, `/mcp` all of them. 2026-07-28 requests
// go to the SDK's own stateless entry (createMcpHandler); 2025-era ones to their session.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler, isLegacyRequest, type AuthInfo, type McpHttpHandler } from '@modelcontextprotocol/server';
import { registerViews, SERVER_VERSION, type Domain, type EngageServer, type Logger } from '@engage-mcp/shared';
import type { Sessions } from './sessions.js';

const MODERN_REVISION = '2026-07-28';

export interface McpEndpoint {
  name: string;
  factory: (era: 'legacy' | 'modern') => McpServer;
  modern: McpHttpHandler;
}

export function mcpEndpoints(catalogs: Domain[], engines: EngageServer[], maxBodyBytes: number, log: Logger): Map<string, McpEndpoint> {
  const endpoints = new Map<string, McpEndpoint>();
  const add = (name: string, factory: McpEndpoint['factory']) => {
    const onerror = (error: Error) => log.debug(`modern: ${error.message}`);
    const modern = createMcpHandler(({ era }) => factory(era), { legacy: 'reject', maxRequestBodySize: maxBodyBytes, onerror });
    endpoints.set(name, { name, factory, modern });
  };
  catalogs.forEach((domain, index) => {
    add(`/mcp/${domain.name}`, (era) => (engines[index] as EngageServer).createMcpServer({ era }));
  });
  const intro = 'engage-mcp: all seven domains of the Tenant Messaging and Engagement API in one server.';
  const instructions = [intro, ...engines.map((engine) => engine.instructions)].join('\n\n');
  add('/mcp', (era) => {
    const mcp = new McpServer(
      { name: 'engage-mcp', title: 'engage-mcp: all domains', version: SERVER_VERSION },
      { capabilities: { tools: { listChanged: false } }, instructions },
    );
    registerViews(
      mcp,
      engines.flatMap((engine) => engine.registerTools(mcp, era)),
    );
    return mcp;
  });
  return endpoints;
}

export type NodeMcpHandler = (req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse) => Promise<void>;

/** The MCP face as a Node handler; the request's authInfo (its key) was set by the guards. */
export function mcpHandler(endpoints: Map<string, McpEndpoint>, sessions: Sessions, maxBodyBytes: number, log: Logger): NodeMcpHandler {
  async function serve(request: Request, requestOptions?: { authInfo?: AuthInfo }): Promise<Response> {
    const authInfo = requestOptions?.authInfo as AuthInfo;
    const target = endpoints.get(new URL(request.url).pathname.replace(/\/+$/, '') || '/') as McpEndpoint;
    // A request that names the 2026-07-28 revision in its header is never legacy (the SDK's own rule):
    // it goes straight to the modern entry, without reading its body twice.
    const modern =
      request.headers.get('mcp-protocol-version') === MODERN_REVISION || !(await isLegacyRequest(request, undefined, { maxRequestBodySize: maxBodyBytes }));
    if (modern) return target.modern.fetch(request, { authInfo });
    return sessions.serve(request, target, authInfo);
  }
  return toNodeHandler({ fetch: serve }, { maxRequestBodySize: maxBodyBytes, onerror: (error) => log.warn(`request: ${error.message}`) });
}
