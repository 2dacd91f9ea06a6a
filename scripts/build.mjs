// Bundles each server (and the sandbox's CLI and demo) for a fast start: a host starts seven
// servers at every launch. Each server's entry is one file that answers initialize and
// tools/list from its manifest (computed here from the catalog); the catalog, zod and undici
// sit in chunks loaded on the first tool call. Type checking is `tsc`, run before this.
import { build } from 'esbuild';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

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
const catalogApart = {
  name: 'engage-catalog-apart',
  setup(plugin) {
    plugin.onResolve({ filter: /^\.\/operations\.js$/ }, () => ({ path: './operations.js', external: true }));
  },
};

// OpenTelemetry's SDK (shared/src/mcp/telemetry-sdk.ts) is a bundle of its own beside each entry,
// loaded only when telemetry is switched on. Built apart, not as a shared chunk: splitting would
// move what it shares with the server (esbuild's helpers, paths.ts) into chunks every start loads.
const telemetryApart = {
  name: 'engage-telemetry-apart',
  setup(plugin) {
    plugin.onResolve({ filter: /^\.\/telemetry-sdk\.js$/ }, () => ({ path: './telemetry-sdk.js', external: true }));
  },
};
const telemetrySdk = (outdir) => build({ ...common, entryPoints: { 'telemetry-sdk': 'shared/src/mcp/telemetry-sdk.ts' }, outdir });

// 2. The servers, each with its manifest; what the first call needs goes in chunks.
await Promise.all(
  DOMAINS.flatMap((domain) => [
    build({
      ...common,
      entryPoints: { server: `packages/${domain}/src/index.ts` },
      outdir: `packages/${domain}/dist`,
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]',
      plugins: [manifestPlugin(manifests[domain]), sdkShims, catalogApart, zodEnglishOnly, telemetryApart],
    }),
    telemetrySdk(`packages/${domain}/dist`),
    // A catalog needs only the catalog module of the core, not the server (nor a second SDK).
    build({
      ...common,
      entryPoints: { operations: `packages/${domain}/src/operations.ts` },
      outdir: `packages/${domain}/dist`,
      alias: { '@engage-mcp/shared': './shared/src/model/catalog.ts' },
      plugins: [zodEnglishOnly],
    }),
  ]),
);

// The bin: a launcher that turns on Node's compile cache (Node ≥ 22.1; older Node goes on without
// it) before the server's code is compiled, so later starts skip most of the compiling. The cache
// is the user's own (~/.cache), not the shared temporary folder another user could write to.
const LAUNCHER = `#!/usr/bin/env node
import * as nodeModule from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
nodeModule.enableCompileCache?.(join(homedir(), '.cache', 'engage-mcp', 'compile-cache'));
await import('./server.js');
`;
await Promise.all(DOMAINS.map((domain) => writeFile(`packages/${domain}/dist/index.js`, LAUNCHER, { mode: 0o755 })));

// 3. The sandbox's command line and the demo.
await Promise.all(
  ['cli', 'demo'].map((name) => build({ ...common, entryPoints: [`packages/sandbox/src/${name}.ts`], outfile: `packages/sandbox/dist/${name}.js` })),
);

// 4. Remote mode (packages/http): one bundle serving the seven domains over Streamable HTTP. A
// long-running service loads everything at start, so no splitting (OpenTelemetry's SDK apart).
await rm('packages/http/dist', { recursive: true, force: true });
await telemetrySdk('packages/http/dist');
await build({
  ...common,
  entryPoints: { cli: 'packages/http/src/cli.ts' },
  outdir: 'packages/http/dist',
  plugins: [sdkShims, zodEnglishOnly, telemetryApart],
  conditions: ['@engage-mcp/source'],
});
