// What a server's tarball carries of the MCP Apps views: only those it can serve. Every server
// shipped both view modules (about 420 KB, 110 KB packed, each): billing and tenant, with no action
// tool and no view, carried both, and the other servers but campaign the dashboard, none of it ever
// loaded: over a third of the billing and tenant tarballs. Each server is started from its unpacked
// tarball (no workspace around it) and every view it lists is read. After `npm run build`.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { packAll, type PackedPackage } from '../scripts/pack.js';
import { PATH_WITH_NODE } from './published-helpers.js';

const run = promisify(execFile);

let work: string;
let packed: PackedPackage[];
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'engage-views-shipped-'));
  packed = await packAll(join(work, 'tarballs'));
}, 60_000);
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const VIEWS: Record<string, string[]> = {
  contact: ['confirm-card'],
  campaign: ['campaign-dashboard', 'confirm-card'],
  inbox: ['confirm-card'],
  channel: ['confirm-card'],
  product: ['confirm-card'],
  billing: [],
  tenant: [],
};
const URIS: Record<string, string> = { 'confirm-card': 'ui://engage/confirm', 'campaign-dashboard': 'ui://engage/campaigns' };

/** The package as npm would unpack it, in a folder of its own. */
async function unpacked(domain: string): Promise<string> {
  const entry = packed.find((candidate) => candidate.name === `@engage-mcp/${domain}`)!;
  const dir = join(work, 'unpacked', domain);
  await mkdir(dir, { recursive: true });
  await run('tar', ['-xzf', entry.tarball, '-C', dir]);
  return join(dir, 'package');
}

describe('the MCP Apps views in a server tarball', () => {
  it('are only those the server can serve', () => {
    for (const [domain, views] of Object.entries(VIEWS)) {
      const files = packed.find((entry) => entry.name === `@engage-mcp/${domain}`)!.files;
      const shipped = files.filter((file) => /^dist\/(confirm-card|campaign-dashboard)\.cjs$/.test(file)).map((file) => file.slice(5, -4));
      expect(shipped.sort(), domain).toEqual(views);
    }
  });

  it('each server started from its tarball lists those views and serves each one', async () => {
    for (const [domain, views] of Object.entries(VIEWS)) {
      const dir = await unpacked(domain);
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [join(dir, 'dist', 'index.js')],
        env: { ...getDefaultEnvironment(), PATH: PATH_WITH_NODE, ENGAGE_API_KEY: 'eng_live_views', ENGAGE_BASE_URL: 'https://api.example.com' },
        cwd: dir,
        stderr: 'pipe',
      });
      const client = new Client(
        { name: 'views', version: '0' },
        { capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } } as never },
      );
      await client.connect(transport);
      try {
        const listed = client.getServerCapabilities()?.resources ? (await client.listResources()).resources.map((resource) => resource.uri) : [];
        expect(listed.sort(), domain).toEqual(views.map((view) => URIS[view]).sort());
        for (const uri of listed) {
          const { contents } = await client.readResource({ uri });
          expect((contents[0] as { text?: string } | undefined)?.text, `${domain} ${uri}`).toMatch(/^<!doctype html>/);
        }
      } finally {
        await client.close();
      }
    }
  }, 60_000);
});
