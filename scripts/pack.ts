// npm run pack: the eight publishable packages (seven servers and the setup command) as npm
// tarballs in one folder (dist-pack/ unless given), from what `npm run build` left in each dist/.
//
// A server's bundle carries the shared core, zod, undici and dotenv, so a published package
// needs no runtime dependency. That is checked, not assumed: every bare import left in the
// bundle must be a Node built-in or a declared dependency, or packing stops and says which.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { manifests } from './catalogs.js';
import {
  PUBLISHED_PACKAGES,
  ROOT,
  npxEntry,
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

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

/**
 * The packages a built entry still imports at run time (Node built-ins left out, and any `node:`
 * name: undici names `node:sqlite`, which Node 20 lacks, only behind a check). esbuild reads the
 * entry and every module it reaches, so static and literal dynamic imports are all seen;
 * `require("…")` calls inside bundled CommonJS go through a local `require` made by the banner,
 * which esbuild does not treat as an import, so those are read from the text as well.
 */
export async function runtimeImports(entry: string): Promise<string[]> {
  const found = new Set<string>();
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'silent',
    plugins: [
      {
        name: 'collect-bare-imports',
        setup(plugin) {
          plugin.onResolve({ filter: /^[^./]/ }, (args) => {
            if (!isBuiltin(args.path) && !args.path.startsWith('node:')) found.add(packageNameOf(args.path));
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });
  for (const file of Object.keys(result.metafile.inputs)) {
    const text = await readFile(resolve(file), 'utf8');
    for (const match of text.matchAll(/\brequire\(\s*["'`]([^"'`./][^"'`]*)["'`]\s*\)/g)) {
      const specifier = match[1] as string;
      if (!isBuiltin(specifier) && !specifier.startsWith('node:')) found.add(packageNameOf(specifier));
    }
  }
  return [...found].sort();
}

/** Fails, naming every problem, unless the package can be published as it stands. */
export async function checkPublishable(packageDir: string, pkg: PackageJson): Promise<void> {
  const problems: string[] = [];
  if (pkg.private) problems.push('is private');
  for (const field of ['name', 'version', 'description', 'license', 'repository', 'engines', 'bin', 'files'] as const) {
    if (!pkg[field]) problems.push(`has no "${field}"`);
  }
  const declared = Object.keys(pkg.dependencies ?? {});
  for (const [bin, target] of Object.entries(pkg.bin ?? {})) {
    const entry = join(packageDir, target);
    if (!existsSync(entry)) {
      problems.push(`bin ${bin} → ${target} does not exist: run npm run build first`);
      continue;
    }
    // The bin runs a bundle it reads itself (scripts/launcher.ts), which no import names: every
    // module beside the bin is checked.
    const dir = dirname(entry);
    const modules = (await readdir(dir)).filter((name) => /\.(c|m)?js$/.test(name)).map((name) => join(dir, name));
    for (const module of modules) {
      const missing = (await runtimeImports(module)).filter((name) => !declared.includes(name));
      if (missing.length > 0) {
        problems.push(
          `bin ${bin}'s ${relative(packageDir, module)} imports ${missing.join(', ')} at run time, which "dependencies" does not declare (bundle them, or declare them)`,
        );
      }
    }
  }
  if (problems.length > 0) throw new Error(`${pkg.name ?? packageDir} cannot be packed: it ${problems.join('; ')}.`);
}

/** The README that npm shows on the package's page. */
function packageReadme(dir: string, pkg: PackageJson): string {
  const repo = repositoryWebUrl(pkg);
  const domain = dir.replace('packages/', '');
  const manifest = manifests()[domain];
  if (!manifest) {
    return `# ${pkg.name}\n\n${pkg.description}.\n\n\`\`\`sh\nnpx ${pkg.name}\n\`\`\`\n\nIt asks which host and which servers, reads the key without showing it, and adds the servers to that host's config file (keeping a backup). \`npx ${pkg.name} --help\` lists the flags for scripts.\n\nSee ${repo}#install.\n`;
  }
  const entry = {
    mcpServers: {
      [serverKey(domain)]: { ...npxEntry(pkg), env: { ENGAGE_API_KEY: '<your tenant API key>', ENGAGE_BASE_URL: 'https://<your API base address>' } },
    },
  };
  const settings = settingsFor(manifest)
    .map(
      (setting) =>
        `| \`${setting.env}\` | ${setting.required ? 'required. ' : ''}${setting.description}${setting.default ? ` Default \`${setting.default}\`.` : ''} |`,
    )
    .join('\n');
  return [
    `# ${pkg.name}`,
    '',
    `${pkg.description}. A stdio server with two tools:`,
    '',
    ...manifest.tools.map((tool) => `- \`${tool.name}\`: ${toolSummary(tool)}`),
    '',
    "Add it to a host's MCP config (Claude Desktop, Cursor, Gemini CLI and Claude Code read this shape):",
    '',
    '```json',
    JSON.stringify(entry, null, 2),
    '```',
    '',
    `Or let \`npx @engage-mcp/setup\` write it for you. Node ${pkg.engines.node}.`,
    '',
    '| variable | meaning |',
    '|---|---|',
    settings,
    '',
    `More: ${repo}#install`,
    '',
  ].join('\n');
}

/** A copy of the package as it will be published, in a folder outside the workspace. */
async function stage(dir: string, into: string): Promise<string> {
  const pkg = readPackageJson(dir);
  await checkPublishable(join(ROOT, dir), pkg);
  const staged = join(into, pkg.name.replace('/', '__'));
  await mkdir(staged, { recursive: true });
  await writeFile(join(staged, 'package.json'), publishedPackageJson(pkg));
  await cp(join(ROOT, dir, 'dist'), join(staged, 'dist'), { recursive: true });
  await writeFile(join(staged, 'README.md'), packageReadme(dir, pkg));
  await cp(join(ROOT, 'LICENSE'), join(staged, 'LICENSE'));
  publishedModes(staged);
  return staged;
}

export interface PackedPackage {
  name: string;
  version: string;
  tarball: string;
  files: string[];
}

/** Stages every published package and packs them all with one `npm pack`. */
export async function packAll(outDir: string): Promise<PackedPackage[]> {
  const staging = await mkdtemp(join(tmpdir(), 'engage-pack-'));
  try {
    const staged = await Promise.all(PUBLISHED_PACKAGES.map((dir) => stage(dir, staging)));
    await mkdir(outDir, { recursive: true });
    // --prefix: npm takes the nearest folder above with a package.json or node_modules/ for the
    // project and reads its .npmrc, and above the staging folder is the temporary folder, where
    // on a shared machine anyone may put both (dry-run=true there made this report eight
    // tarballs and write none).
    const { stdout } = await run('npm', ['pack', ...staged, '--pack-destination', resolve(outDir), '--json', '--ignore-scripts', '--prefix', staging], {
      cwd: staging,
      maxBuffer: 16 * 1024 * 1024,
    });
    const packed = JSON.parse(stdout) as { name: string; version: string; filename: string; files: { path: string }[] }[];
    const tarballs = packed.map((entry) => ({
      name: entry.name,
      version: entry.version,
      tarball: join(resolve(outDir), entry.filename),
      files: entry.files.map((file) => file.path).sort(),
    }));
    const missing = tarballs.filter((entry) => !existsSync(entry.tarball)).map((entry) => entry.tarball);
    if (missing.length > 0) throw new Error(`npm pack reported ${missing.join(', ')} but did not write them (a dry-run setting in an .npmrc?)`);
    return tarballs;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const outDir = resolve(process.argv[2] ?? join(ROOT, 'dist-pack'));
  await rm(outDir, { recursive: true, force: true });
  const packed = await packAll(outDir);
  for (const entry of packed) console.log(`${entry.tarball}  (${entry.files.length} files)`);
  const names = await readdir(outDir);
  console.log(`${names.length} tarballs in ${outDir}`);
}
