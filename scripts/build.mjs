// Bundles each server (and the sandbox's CLI and demo) for a fast start: a host starts seven
// servers at every launch. Each server's start is one file that answers initialize and
// tools/list from its manifest (computed here from the catalog), run through a code cache; the
// catalog, zod's classic API and undici are modules of their own loaded on the first tool call.
// Type checking is `tsc`, run before this.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundledPackages, LICENSES_FILE, recalledPackages, writeLicenses } from './build-licenses.mjs';

// Some dependencies are CommonJS and call require(); an ESM bundle needs one.
const banner = { js: "import { createRequire as __engageCreateRequire } from 'node:module'; const require = __engageCreateRequire(import.meta.url);" };
// keepNames is off: it wraps every class and function of the SDK and zod in a naming call at start-up.
const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  keepNames: false,
  sourcemap: true,
  legalComments: 'external',
  logLevel: 'warning',
  // What each output holds, for the licences of the packages bundled (scripts/build-licenses.mjs).
  metafile: true,
  banner,
};

// The SDK picks its default JSON Schema validator (ajv) through this one module; ours replaces it
// (shared/src/mcp/sdk-shims.ts) with the SDK's own cf-worker validator, which every server passes too.
const sdkShims = {
  name: 'engage-sdk-shims',
  setup(plugin) {
    plugin.onResolve({ filter: /^@modelcontextprotocol\/server\/_shims$/ }, () => ({
      path: fileURLToPath(new URL('../shared/src/mcp/sdk-shims.ts', import.meta.url)),
    }));
  },
};

// zod re-exports all of its 50-odd locales (`z.locales`) from its index, so every bundle carried
// about 250 KB of error messages in other languages; nothing here selects one (zod registers
// English itself), so its locales index is replaced by English alone.
const zodEnglishOnly = {
  name: 'engage-zod-english-only',
  setup(plugin) {
    plugin.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer) ? { path: 'zod-locales', namespace: 'engage-zod-locales', pluginData: args.resolveDir } : undefined,
    );
    plugin.onLoad({ filter: /.*/, namespace: 'engage-zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(`${args.pluginData}/../locales/en.js`)};`,
      resolveDir: args.pluginData,
    }));
  },
};

// 1. The manifests, from the catalogs (bundled to a temporary module and imported).
await mkdir('node_modules/.cache/engage-build', { recursive: true });
const catalogs = 'node_modules/.cache/engage-build/catalogs.mjs';
await build({ ...common, minify: false, sourcemap: false, entryPoints: ['scripts/catalogs.ts'], outfile: catalogs });
const manifests = (await import(pathToFileURL(catalogs).href)).manifests();
const DOMAINS = Object.keys(manifests);
await Promise.all([...DOMAINS, 'sandbox'].map((dir) => rm(`packages/${dir}/dist`, { recursive: true, force: true })));

const manifestPlugin = (manifest) => ({
  name: 'engage-manifest',
  setup(plugin) {
    plugin.onResolve({ filter: /^engage:manifest$/ }, () => ({ path: 'manifest', namespace: 'engage-manifest' }));
    plugin.onLoad({ filter: /.*/, namespace: 'engage-manifest' }, () => ({ contents: JSON.stringify(manifest), loader: 'json' }));
  },
});

// The catalog is its own bundle, with its own copy of zod: sharing zod with the SDK would put all
// of zod's classic API (the catalog's schemas use it) into the code every start loads. Nothing
// passes zod objects between the two: the tools' schemas are JSON Schema.
// What the first tool call loads (the catalog, undici's Pool, the streamed-list reader, the MCP
// Apps views) and OpenTelemetry's SDK (only when telemetry is on) are modules of their own beside
// the server, each whole, loaded by require() when first needed: they share no state with the
// server (they hold the catalog, pure functions, undici, or HTML). CommonJS throughout, because
// an import() from code run through the code cache needs an experimental Node API.
const LAZY = /^\.\/(operations|telemetry-sdk|undici-pool|stream-list|confirm-card|campaign-dashboard)\.js$/;
const VIEW_MODULES = ['confirm-card', 'campaign-dashboard'];
/**
 * `views`: those the server can serve, whose modules it ships; another view's import (unreachable:
 * the server lists no such view) becomes a module that says so, not a file the package lacks.
 */
const lazyApart = (views) => ({
  name: 'engage-lazy-apart',
  setup(plugin) {
    plugin.onResolve({ filter: LAZY }, (args) => {
      const name = args.path.slice(2, -3);
      if (VIEW_MODULES.includes(name) && !views.has(name)) return { path: name, namespace: 'engage-view-not-served' };
      return { path: args.path.replace(/\.js$/, '.cjs'), external: true };
    });
    plugin.onLoad({ filter: /.*/, namespace: 'engage-view-not-served' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`this server serves no ${args.path} view`)});`,
      loader: 'js',
    }));
  },
});
const LAZY_ENTRIES = {
  'telemetry-sdk': 'shared/src/mcp/telemetry-sdk.ts',
  'undici-pool': 'shared/src/upstream/undici-pool.ts',
  'stream-list': 'shared/src/upstream/stream-list.ts',
  'confirm-card': 'packages/apps/dist/confirm-card.js',
  'campaign-dashboard': 'packages/apps/dist/campaign-dashboard.js',
};
// CommonJS for the stdio servers: import() becomes require() (dynamic-import "unsupported").
const commonJs = {
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  supported: { 'dynamic-import': false },
  banner: { js: "var __engageImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  define: { 'import.meta.url': '__engageImportMetaUrl' },
};
/**
 * The views a server can serve (shared/src/mcp/apps.ts viewOf): the confirmation card where it has
 * an action tool, and those its operations name. Each view module is about 420 KB (110 KB packed):
 * billing and tenant carried two and the other servers but campaign the dashboard, never loaded.
 */
const viewsOf = (manifest) =>
  new Set([
    ...(manifest.tools.some((tool) => tool.kind === 'action') ? ['confirm-card'] : []),
    ...manifest.tools.flatMap((tool) => tool.operations.flatMap((op) => (op.view ? [op.view] : []))),
  ]);
const lazyModules = (outdir, views) =>
  build({
    ...common,
    ...commonJs,
    entryPoints: Object.fromEntries(Object.entries(LAZY_ENTRIES).filter(([name]) => !VIEW_MODULES.includes(name) || views.has(name))),
    outdir,
    plugins: [lazyApart(views), zodEnglishOnly],
  });
// Remote mode is one long-running ES module bundle: only OpenTelemetry's SDK stays apart there.
const telemetryApart = {
  name: 'engage-telemetry-apart',
  setup(plugin) {
    plugin.onResolve({ filter: /^\.\/telemetry-sdk\.js$/ }, () => ({ path: './telemetry-sdk.js', external: true }));
  },
};
const telemetrySdk = (outdir) => build({ ...common, entryPoints: { 'telemetry-sdk': LAZY_ENTRIES['telemetry-sdk'] }, outdir });

/** dist/third-party-licenses.LEGAL.txt: the licences of every package the builds put in that dist/. */
const writeBundledLicenses = (outdir, builds, alsoBundled = []) =>
  writeLicenses(`${outdir}/${LICENSES_FILE}`, new Set([...alsoBundled, ...builds.flatMap((result) => [...bundledPackages(result.metafile)])]));
// The views' HTML is a string to the servers' builds: what it inlines, build-apps.mjs recorded.
const viewPackages = recalledPackages('packages/apps/dist/bundled-packages.json');

// 2. The servers, each with its manifest. The code every start runs is one file (server.cjs),
// which the bin runs through V8's code cache (scripts/launcher.ts).
await Promise.all(
  DOMAINS.map(async (domain) => {
    const views = viewsOf(manifests[domain]);
    const builds = await Promise.all([
      build({
        ...common,
        ...commonJs,
        entryPoints: { server: `packages/${domain}/src/index.ts` },
        outdir: `packages/${domain}/dist`,
        plugins: [manifestPlugin(manifests[domain]), sdkShims, lazyApart(views), zodEnglishOnly],
      }),
      lazyModules(`packages/${domain}/dist`, views),
      // A catalog needs only the catalog module of the core, not the server (nor a second SDK).
      build({
        ...common,
        ...commonJs,
        entryPoints: { operations: `packages/${domain}/src/operations.ts` },
        outdir: `packages/${domain}/dist`,
        alias: { '@engage-mcp/shared': './shared/src/model/catalog.ts' },
        plugins: [zodEnglishOnly],
      }),
    ]);
    writeBundledLicenses(`packages/${domain}/dist`, builds, views.size > 0 ? viewPackages : []);
  }),
);

// The bin: the launcher, told which bundle it runs and the bundle's build id (a hash of it).
await Promise.all(
  DOMAINS.map(async (domain) => {
    const buildId = createHash('sha256')
      .update(await readFile(`packages/${domain}/dist/server.cjs`))
      .digest('hex')
      .slice(0, 16);
    const contents = [
      "const { join } = require('node:path');",
      "const { cacheDirOf, launch } = require('./scripts/launcher.ts');",
      `launch({ file: join(__dirname, 'server.cjs'), name: ${JSON.stringify(domain)}, buildId: ${JSON.stringify(buildId)}, cacheDir: cacheDirOf() });`,
    ].join('\n');
    // dist/ is CommonJS (its own package.json says so): index.js is what hosts run, and an ES
    // module entry would start Node's ES module loader only to run CommonJS.
    await writeFile(`packages/${domain}/dist/package.json`, '{ "type": "commonjs" }\n');
    await build({
      ...common,
      format: 'cjs',
      sourcemap: false,
      banner: { js: '#!/usr/bin/env node' },
      stdin: { contents, resolveDir: '.', loader: 'ts', sourcefile: `${domain}-launcher.ts` },
      outfile: `packages/${domain}/dist/index.js`,
    });
    await chmod(`packages/${domain}/dist/index.js`, 0o755);
  }),
);

// 3. The sandbox's command line and the demo.
await Promise.all(
  ['cli', 'demo'].map((name) => build({ ...common, entryPoints: [`packages/sandbox/src/${name}.ts`], outfile: `packages/sandbox/dist/${name}.js` })),
);

// 4. Remote mode (packages/http): one bundle serving the seven domains over Streamable HTTP. A
// long-running service loads everything at start, so no splitting (OpenTelemetry's SDK apart).
await rm('packages/http/dist', { recursive: true, force: true });
const httpBuilds = [
  await telemetrySdk('packages/http/dist'),
  await build({
    ...common,
    entryPoints: { cli: 'packages/http/src/cli.ts' },
    outdir: 'packages/http/dist',
    plugins: [sdkShims, zodEnglishOnly, telemetryApart],
    conditions: ['@engage-mcp/source'],
  }),
];
writeBundledLicenses('packages/http/dist', httpBuilds, viewPackages);
