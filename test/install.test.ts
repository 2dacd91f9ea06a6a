// The published form, as a newcomer gets it: the eight tarballs of npm run pack, installed with
// npm into an empty folder outside the checkout (offline, so nothing can come from the registry
// or the workspace), each server started through its bin over stdio against the sandbox.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { checkPublishable, packAll, runtimeImports, type PackedPackage } from '../scripts/pack.js';
import { readPackageJson, SERVER_DOMAINS } from '../scripts/distribution.js';
import { expectToolsAndARead, PATH_WITH_NODE } from './published-helpers.js';

const run = promisify(execFile);

/** The environment without what `npm test` passes down (npm_config_*, the workspace's paths). */
function outsideEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) && name !== 'INIT_CWD'));
}

let work: string;
let prefix: string;
let packed: PackedPackage[];
let sandbox: Sandbox;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'engage-install-'));
  prefix = join(work, 'prefix');
  await mkdir(prefix);
  // A package.json of its own, so npm takes this folder as the project and looks no further up.
  await writeFile(join(prefix, 'package.json'), '{ "name": "newcomer", "private": true }\n');
  packed = await packAll(join(work, 'tarballs'));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', ...packed.map((entry) => entry.tarball)], {
    cwd: prefix,
    env: outsideEnv(),
  });
  sandbox = await startSandbox();
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('npm run pack', () => {
  it('packs the seven servers and the setup command, each with only what runs', () => {
    expect(packed.map((entry) => entry.name).sort()).toEqual([...SERVER_DOMAINS, 'setup'].map((name) => `@engage-mcp/${name}`).sort());
    for (const entry of packed) {
      for (const file of entry.files)
        expect(file, `${entry.name}: ${file}`).toMatch(/^(package\.json|README\.md|LICENSE|dist\/package\.json|dist\/.+\.(c?js|LEGAL\.txt))$/);
      expect(
        entry.files.some((file) => file.endsWith('.map')),
        entry.name,
      ).toBe(false);
    }
  });

  it('refuses a package whose bundle still imports an undeclared package', async () => {
    const fake = join(work, 'leaky');
    await mkdir(join(fake, 'dist'), { recursive: true });
    await writeFile(join(fake, 'dist', 'index.js'), "import pad from 'left-pad';\nimport './chunk.js';\nimport { readFile } from 'node:fs';\n");
    await writeFile(
      join(fake, 'dist', 'chunk.js'),
      "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);\nrequire(\"@scope/thing/sub\"); require('node:http'); await import('zod');\n",
    );
    expect(await runtimeImports(join(fake, 'dist', 'index.js'))).toEqual(['@scope/thing', 'left-pad', 'zod']);
    const pkg = { ...readPackageJson('packages/contact'), bin: { leaky: 'dist/index.js' }, dependencies: { zod: '^4' } };
    await expect(checkPublishable(fake, pkg)).rejects.toThrow(/imports @scope\/thing, left-pad at run time/);
  });
});

describe('installed from the tarballs into an empty folder', () => {
  it('brings nothing but the eight packages: no runtime dependencies', async () => {
    const lock = JSON.parse(await readFile(join(prefix, 'node_modules', '.package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    expect(Object.keys(lock.packages).sort()).toEqual(packed.map((entry) => `node_modules/${entry.name}`).sort());
  });

  it('each bin starts its server over stdio: tools listed, a read answered', async () => {
    const env = {
      ...getDefaultEnvironment(),
      PATH: PATH_WITH_NODE,
      ENGAGE_BASE_URL: sandbox.baseUrl,
      ENGAGE_API_KEY: sandbox.keys.full,
    };
    await Promise.all(
      SERVER_DOMAINS.map(async (domain) => {
        const transport = new StdioClientTransport({ command: join(prefix, 'node_modules', '.bin', `engage-mcp-${domain}`), env, cwd: prefix, stderr: 'pipe' });
        const client = new Client({ name: 'newcomer', version: '0' });
        await client.connect(transport);
        try {
          await expectToolsAndARead(client, domain);
        } finally {
          await client.close();
        }
      }),
    );
  });

  it('the setup bin prints the entries for a host', async () => {
    const { stdout } = await run(
      join(prefix, 'node_modules', '.bin', 'engage-mcp-setup'),
      ['--print', '--host', 'cursor', '--servers', 'all', '--base-url', 'https://api.example.com'],
      {
        cwd: prefix,
        env: { ...outsideEnv(), PATH: PATH_WITH_NODE },
      },
    );
    const servers = JSON.parse(stdout).mcpServers as Record<string, { args: string[] }>;
    expect(Object.keys(servers)).toEqual(SERVER_DOMAINS.map((domain) => `engage-${domain}`));
    expect(servers['engage-contact']!.args).toEqual(['--prefix', homedir(), '-y', '@engage-mcp/contact']);
  });
});
