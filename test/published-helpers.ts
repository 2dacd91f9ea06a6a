// Shared by the tests of the published forms (install, distribution): starting a server as a
// host would, outside the workspace, and asking it for one read.
import { delimiter, dirname } from 'node:path';
import { expect } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { manifests } from '../scripts/catalogs.js';

/** PATH with this node first: a bin's `#!/usr/bin/env node`, or a bundle's `node`, finds it. */
export const PATH_WITH_NODE = [dirname(process.execPath), process.env.PATH].join(delimiter);

/** Lists the server's tools (they must be the catalog's) and runs a read that needs no parameters. */
export async function expectToolsAndARead(client: Client, domain: string): Promise<void> {
  const manifest = manifests()[domain]!;
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name)).toEqual(manifest.tools.map((tool) => tool.name));
  const tool = manifest.tools.find((candidate) => candidate.kind === 'read')!;
  const operation = tool.operations.find((op) => op.signature === '')!;
  const result = (await client.callTool({ name: tool.name, arguments: { operationId: operation.id } })) as CallToolResult;
  expect(result.isError, `${operation.id}: ${JSON.stringify(result.content)}`).toBeFalsy();
  expect(result.structuredContent).toBeDefined();
}
