// The whole published path, which no other test walks: the entry the setup command writes
// (`npx --prefix <home> -y @engage-mcp/<domain>`) run as a host runs it, from a folder outside the
// home folder, with npx fetching the package from a registry: a local one, serving the tarballs of
// `npm run pack` as the npm registry would (a packument per package, the tarball, its integrity).
// Then the v1 and the v2 client each list the tools and run a read. After `npm run build`.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { packAll } from '../scripts/pack.js';
import { PATH_WITH_NODE } from './published-helpers.js';
import { SETUP_CLI } from './setup-run.js';

let work: string;
let registry: Server;
let registryUrl: string;
let sandbox: Sandbox;

/** A registry that knows only the packed tarballs: GET /<name> is the packument, GET /-/<file> the tarball. */
async function startRegistry(tarballs: string[]): Promise<void> {
  const byName = new Map<string, { manifest: Record<string, unknown>; data: Buffer; file: string }>();
  for (const tarball of tarballs) {
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' })) as Record<string, unknown>;
    byName.set(manifest.name as string, { manifest, data: readFileSync(tarball), file: tarball.split('/').pop() as string });
  }
  registry = createServer((request, response) => {
    const url = request.url ?? '/';
    const tarball = [...byName.values()].find((entry) => url === `/-/${entry.file}`);
    if (tarball) {
      response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tarball.data);
      return;
    }
    const entry = byName.get(decodeURIComponent(url.slice(1)));
    if (!entry) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const version = entry.manifest.version as string;
    const dist = {
      tarball: `${registryUrl}-/${entry.file}`,
      integrity: `sha512-${createHash('sha512').update(entry.data).digest('base64')}`,
      shasum: createHash('sha1').update(entry.data).digest('hex'),
    };
    const packument = { name: entry.manifest.name, 'dist-tags': { latest: version }, versions: { [version]: { ...entry.manifest, dist } } };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
  });
  await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
  registryUrl = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'engage-npx-registry-'));
  const packed = await packAll(join(work, 'tarballs'));
  await startRegistry(packed.map((entry) => entry.tarball));
  sandbox = await startSandbox();
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
  await new Promise((resolve) => registry?.close(resolve));
  if (work) await rm(work, { recursive: true, force: true });
});

/** npm as a host's npx meets it: this registry, a cache of its own, nothing else asked of the network. */
const npmEnv = () => ({
  npm_config_registry: registryUrl,
  npm_config_cache: join(work, 'npm-cache'),
  npm_config_update_notifier: 'false',
  npm_config_audit: 'false',
});

describe('the entry setup writes, started by npx from a registry', () => {
  it.skipIf(process.platform === 'win32')(
    'starts the server outside the home folder; both client eras list its tools and read',
    async () => {
      const home = join(work, 'home');
      const elsewhere = join(work, 'elsewhere');
      await mkdir(home, { recursive: true });
      await mkdir(elsewhere, { recursive: true });
      execFileSync(process.execPath, [SETUP_CLI, '--host', 'claude-code', '--servers', 'tenant', '--base-url', sandbox.baseUrl, '--key-stdin', '--yes'], {
        cwd: elsewhere,
        env: { PATH: PATH_WITH_NODE, HOME: home },
        input: `${sandbox.keys.full}\n`,
      });
      const entry = JSON.parse(await readFile(join(home, '.claude.json'), 'utf8')).mcpServers['engage-tenant'];
      expect(entry.args).toEqual(['--prefix', home, '-y', '@engage-mcp/tenant']);
      const eras = [
        ['v1', () => new Client({ name: 'host', version: '0' }), StdioClientTransport],
        ['v2', () => new ModernClient({ name: 'host', version: '0' }), ModernStdioTransport],
      ] as const;
      for (const [era, makeClient, Transport] of eras) {
        const transport = new Transport({
          command: entry.command,
          args: entry.args,
          env: { PATH: PATH_WITH_NODE, HOME: home, ...entry.env, ...npmEnv() },
          cwd: elsewhere,
          stderr: 'pipe',
        });
        const client = makeClient();
        await client.connect(transport as never);
        try {
          const { tools } = await client.listTools();
          expect(
            tools.map((tool) => tool.name),
            era,
          ).toEqual(['tenant_list', 'tenant_get']);
          const read = (await client.callTool({ name: 'tenant_list', arguments: { operationId: 'tenant.list' } })) as { isError?: boolean };
          expect(read.isError, era).toBeFalsy();
        } finally {
          await client.close();
        }
      }
    },
    60_000,
  );
});
