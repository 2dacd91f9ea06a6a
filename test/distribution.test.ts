// The other published forms: the MCP bundles (checked and packed by the official mcpb tool, then
// unpacked and started the way Claude Desktop starts them) and the MCP registry's server.json
// files (checked against the registry's own schema, kept in registry/).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { getMcpConfigForManifest, type McpbManifestAny } from '@anthropic-ai/mcpb';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { manifests } from '../scripts/catalogs.js';
import { MCPB, stageBundles, validateAndPack, type StagedBundle } from '../scripts/bundle.js';
import { readPackageJson, ROOT, SERVER_DOMAINS } from '../scripts/distribution.js';
import { serverJsonText } from '../scripts/registry.js';
import { expectToolsAndARead, PATH_WITH_NODE } from './published-helpers.js';

const run = promisify(execFile);

let work: string;
let bundles: StagedBundle[];
let sandbox: Sandbox;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'engage-bundles-'));
  bundles = await stageBundles(work);
  sandbox = await startSandbox();
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('MCP bundles', () => {
  it('each passes mcpb validate and is packed by mcpb pack', async () => {
    const outputs = await Promise.all(bundles.map(validateAndPack));
    for (const [index, output] of outputs.entries()) {
      expect(output.validate).toContain('Manifest schema validation passes!');
      expect(existsSync(bundles[index]!.mcpb)).toBe(true);
    }
  }, 60_000);

  it("ask for the key as a secret and the base address, and list the catalog's tools", () => {
    for (const bundle of bundles) {
      const manifest = JSON.parse(readFileSync(join(bundle.dir, 'manifest.json'), 'utf8'));
      expect(manifest.user_config.api_key).toMatchObject({ required: true, sensitive: true });
      expect(manifest.user_config.base_url).toMatchObject({ required: true });
      expect(manifest.tools.map((tool: { name: string }) => tool.name)).toEqual(manifests()[bundle.domain]!.tools.map((tool) => tool.name));
      expect(manifest.version).toBe(readPackageJson(`packages/${bundle.domain}`).version);
    }
  });

  it('once installed, start with only the key and base address given, as Claude Desktop resolves them', async () => {
    await Promise.all(
      bundles.map(async (bundle) => {
        const unpacked = join(work, 'installed', bundle.domain);
        await run(MCPB, ['unpack', bundle.mcpb, unpacked]);
        const manifest = JSON.parse(await readFile(join(unpacked, 'manifest.json'), 'utf8')) as McpbManifestAny;
        const config = await getMcpConfigForManifest({
          manifest,
          extensionPath: unpacked,
          systemDirs: {},
          userConfig: { api_key: sandbox.keys.full, base_url: sandbox.baseUrl },
          pathSeparator: '/',
        });
        expect(config).toBeDefined();
        // Every optional setting resolved to its default: nothing is left as ${user_config.…}.
        for (const value of Object.values(config!.env ?? {})) expect(value).not.toContain('${');
        const transport = new StdioClientTransport({
          command: config!.command,
          args: config!.args ?? [],
          env: { ...getDefaultEnvironment(), PATH: PATH_WITH_NODE, ...config!.env },
          cwd: unpacked,
          stderr: 'pipe',
        });
        const client = new Client({ name: 'desktop', version: '0' });
        await client.connect(transport);
        try {
          await expectToolsAndARead(client, bundle.domain);
        } finally {
          await client.close();
        }
      }),
    );
  }, 60_000);
});

describe('MCP registry entries (server.json)', () => {
  const schema = JSON.parse(readFileSync(join(ROOT, 'registry', 'server.schema.json'), 'utf8'));
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const validate = ajv.compile(schema);

  it.each(SERVER_DOMAINS)('%s: is current, valid against the registry schema, and matches its npm package', (domain) => {
    const path = join(ROOT, 'packages', domain, 'server.json');
    const text = readFileSync(path, 'utf8');
    expect(text, 'stale: run npm run registry').toBe(serverJsonText(domain));
    const entry = JSON.parse(text);
    expect(validate(entry), ajv.errorsText(validate.errors)).toBe(true);
    const pkg = readPackageJson(`packages/${domain}`);
    expect(entry.name).toBe(pkg.mcpName);
    expect(entry.packages).toEqual([
      expect.objectContaining({ registryType: 'npm', identifier: pkg.name, version: pkg.version, transport: { type: 'stdio' } }),
    ]);
    const variables = entry.packages[0].environmentVariables as { name: string; isSecret: boolean; isRequired: boolean }[];
    expect(variables.find((variable) => variable.name === 'ENGAGE_API_KEY')).toMatchObject({ isSecret: true, isRequired: true });
    expect(variables.filter((variable) => variable.isSecret).map((variable) => variable.name)).toEqual(['ENGAGE_API_KEY']);
  });

  it('the schema is really applied: a description over 100 characters is refused', () => {
    const entry = JSON.parse(serverJsonText('contact'));
    expect(validate({ ...entry, description: 'x'.repeat(101) })).toBe(false);
  });
});
