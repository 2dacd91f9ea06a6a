// The minimal stdio server the bench measures the call path against: the same SDK entry (McpServer
// over StdioServerTransport), one tool doing the same GET with undici's Pool and returning the API's
// JSON as text, and nothing else (no validation of parameters, paging, cleaning, redaction,
// output schema or confirmation). Plain .mjs, so it runs under bare node as the built servers do.
// Env: ENGAGE_BASE_URL, ENGAGE_API_KEY; the tool `get` takes { path }.
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { Pool } from 'undici';
import { z } from 'zod';

const upstream = new Pool(process.env.ENGAGE_BASE_URL, { connections: 16 });
const key = process.env.ENGAGE_API_KEY ?? '';
const mcp = new McpServer({ name: 'bench-stdio-peer', version: '0.0.0' }, { capabilities: { tools: { listChanged: false } } });
mcp.registerTool('get', { description: 'One GET of the API.', inputSchema: z.object({ path: z.string() }) }, async ({ path }) => {
  const response = await upstream.request({ path, method: 'GET', headers: { 'x-api-key': key } });
  const text = await response.body.text();
  return { content: [{ type: 'text', text }], isError: response.statusCode !== 200 };
});
await mcp.connect(new StdioServerTransport());
