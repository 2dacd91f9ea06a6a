// npm run bundle: one MCP bundle (.mcpb) per server in dist-bundle/, which Claude Desktop installs
// with a double-click, asking for the key (kept in the OS keychain, as `sensitive`) and the base
// address. Each manifest is computed from the catalog's manifest, the package.json and the
// settings list; each bundle is validated and packed by the official mcpb tool.
import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { DomainManifest } from '@engage-mcp/shared';
import { manifests } from './catalogs.js';
import {
  ROOT,
  publishedModes,
  publishedPackageJson,
  readPackageJson,
  repositoryWebUrl,
  serverKey,
  settingsFor,
  toolSummary,
  type PackageJson,
} from './distribution.js';

const run = promisify(execFile);
export const MCPB = join(ROOT, 'node_modules', '.bin', 'mcpb');

/** manifest.json for one server, in the MCPB manifest format 0.3. */
export function bundleManifest(domain: string, manifest: DomainManifest, pkg: PackageJson) {
  const userConfig: Record<string, Record<string, unknown>> = {};
  const env: Record<string, string> = {};
  for (const setting of settingsFor(manifest)) {
    if (!setting.bundle) continue;
    env[setting.env] = `\${user_config.${setting.bundle}}`;
    const type = setting.format === 'boolean' ? 'boolean' : 'string';
    userConfig[setting.bundle] = {
      type,
      title: setting.title,
      description: setting.description,
      required: setting.required === true,
      // An optional field needs a default: the host leaves `${user_config.x}` unreplaced without
      // one. An empty string is what the server reads as "not set".
      ...(setting.required ? {} : { default: type === 'boolean' ? setting.default === 'true' : (setting.default ?? '') }),
      ...(setting.secret ? { sensitive: true } : {}),
    };
  }
  const repository = repositoryWebUrl(pkg);
  return {
    manifest_version: '0.3',
    name: serverKey(domain),
    display_name: `Engage: ${manifest.title}`,
    version: pkg.version,
    description: pkg.description,
    long_description: `${pkg.description}. Two tools, so a host's per-tool approval follows risk; risky operations never run without a person's yes.`,
    author: { name: pkg.author },
    repository: { type: 'git', url: repository },
    homepage: `${repository}#readme`,
    documentation: `${repository}#install`,
    license: pkg.license,
    keywords: pkg.keywords as string[],
    icon: 'icon.png',
    server: {
      type: 'node',
      entry_point: 'server/index.js',
      mcp_config: { command: 'node', args: ['${__dirname}/server/index.js'], env },
    },
    tools: manifest.tools.map((tool) => ({ name: tool.name, description: toolSummary(tool) })),
    tools_generated: false,
    compatibility: { platforms: ['darwin', 'win32', 'linux'], runtimes: { node: pkg.engines.node } },
    user_config: userConfig,
  };
}

export interface StagedBundle {
  domain: string;
  dir: string;
  /** Where `mcpb pack` writes it. */
  mcpb: string;
}

/**
 * The bundle's folder: manifest.json, icon.png, the server's built files under server/ (with the
 * build's server/package.json, whose "type": "commonjs" tells node how to read index.js), and the
 * package's own package.json.
 */
export async function stageBundles(outDir: string): Promise<StagedBundle[]> {
  return Promise.all(
    Object.entries(manifests()).map(async ([domain, manifest]) => {
      const pkg = readPackageJson(`packages/${domain}`);
      const dir = join(outDir, domain);
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      await cp(join(ROOT, 'packages', domain, 'dist'), join(dir, 'server'), { recursive: true, filter: (source) => !source.endsWith('.map') });
      await writeFile(join(dir, 'package.json'), publishedPackageJson(pkg));
      await cp(join(ROOT, 'bundles', 'icon.png'), join(dir, 'icon.png'));
      await cp(join(ROOT, 'LICENSE'), join(dir, 'LICENSE'));
      await writeFile(join(dir, 'manifest.json'), `${JSON.stringify(bundleManifest(domain, manifest, pkg), null, 2)}\n`);
      return { domain, dir, mcpb: join(outDir, `${pkg.name.replace('@', '').replace('/', '-')}-${pkg.version}.mcpb`) };
    }),
  );
}

/** `mcpb validate` then `mcpb pack`; rejects with the tool's own output when either fails. */
export async function validateAndPack(bundle: StagedBundle): Promise<{ validate: string; pack: string }> {
  const validate = await run(MCPB, ['validate', join(bundle.dir, 'manifest.json')]);
  publishedModes(bundle.dir);
  const pack = await run(MCPB, ['pack', bundle.dir, bundle.mcpb]);
  await writeFile(bundle.mcpb, withFixedTimes(await readFile(bundle.mcpb)));
  return { validate: validate.stdout, pack: pack.stdout };
}

/**
 * The time every entry of a bundle is dated: npm's own for the files of a tarball
 * (1985-10-26 08:15:00), as MS-DOS time and date fields.
 */
const DOS_TIME = (8 << 11) | (15 << 5);
const DOS_DATE = ((1985 - 1980) << 9) | (10 << 5) | 26;

/**
 * The zip with every entry dated DOS_TIME/DOS_DATE. `mcpb pack` dates every entry with the time it
 * ran, so two packs of one build differed: nobody could check that a bundle was built from the
 * commit it claims. The dates sit in each local header and each central directory record, outside
 * what the CRCs cover; nothing else in the file changes.
 */
export function withFixedTimes(zip: Buffer): Buffer {
  const out = Buffer.from(zip);
  const end = out.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error('not a zip: no end of central directory');
  const entries = out.readUInt16LE(end + 10);
  let at = out.readUInt32LE(end + 16);
  for (let index = 0; index < entries; index++) {
    if (out.readUInt32LE(at) !== 0x02014b50) throw new Error(`not a zip: central directory record ${index} is damaged`);
    out.writeUInt16LE(DOS_TIME, at + 12);
    out.writeUInt16LE(DOS_DATE, at + 14);
    const local = out.readUInt32LE(at + 42);
    if (out.readUInt32LE(local) !== 0x04034b50) throw new Error(`not a zip: local header ${index} is damaged`);
    out.writeUInt16LE(DOS_TIME, local + 10);
    out.writeUInt16LE(DOS_DATE, local + 12);
    at += 46 + out.readUInt16LE(at + 28) + out.readUInt16LE(at + 30) + out.readUInt16LE(at + 32);
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const outDir = resolve(process.argv[2] ?? join(ROOT, 'dist-bundle'));
  await rm(outDir, { recursive: true, force: true });
  for (const bundle of await stageBundles(outDir)) {
    await validateAndPack(bundle);
    console.log(bundle.mcpb);
  }
}
