// The minimal SDK server bench/http-peer.ts measures remote mode against: the same SDK entries
// (createMcpHandler, toNodeHandler), one tool doing the same GET with undici and returning its JSON
// as text, and nothing else (no guards, metrics, paging, redaction or confirmation). Plain .mjs, so
// it runs under bare node as the built service does. Prints {"url": …} on stdout when it listens.
// Usage: node bench/peer-server.mjs <API base URL>
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { Pool } from 'undici';
import { z } from 'zod';

const baseUrl = process.argv[2];
if (!baseUrl) throw new Error('usage: node bench/peer-server.mjs <API base URL>');
const upstream = new Pool(baseUrl, { connections: 64 });

function peerServer() {
  const mcp = new McpServer({ name: 'bench-peer', version: '0.0.0' }, { capabilities: { tools: { listChanged: false } } });
  mcp.registerTool('contact_list', { description: 'Contacts of the tenant.', inputSchema: z.object({}) }, async (_args, ctx) => {
    const key = ctx.http?.authInfo?.token ?? '';
    const response = await upstream.request({ path: '/api/user/users', method: 'GET', headers: { 'x-api-key': key } });
    const text = await response.body.text();
    return { content: [{ type: 'text', text }], isError: response.statusCode !== 200 };
  });
  return mcp;
}

const serveMcp = toNodeHandler(createMcpHandler(peerServer, { legacy: 'reject' }));
const server = createServer((req, res) => {
  // The key travels as the request's authInfo, as remote mode hands it to the SDK.
  const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
  req.auth = { token, clientId: 'bench', scopes: [] };
  serveMcp(req, res);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
