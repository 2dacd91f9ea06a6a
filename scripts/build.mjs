// Bundles each server (and the sandbox's CLI and demo) for a fast start: a host starts seven
// servers at every launch. Each server's entry is one file that answers initialize and
// tools/list from its manifest (computed here from the catalog); the catalog, zod and undici
// sit in chunks loaded on the first tool call. Type checking is `tsc`, run before this.
import { build } from 'esbuild';
import { mkdir, rm } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

// Some dependencies are CommonJS and call require(); an ESM bundle needs one.
const banner = { js: "import { createRequire as __engageCreateRequire } from 'node:module'; const require = __engageCreateRequire(import.meta.url);" };
const common = { bundle: true, platform: 'node', format: 'esm', target: 'node20', minify: true, keepNames: true, sourcemap: true, legalComments: 'external', logLevel: 'warning', banner };

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

// 2. The servers, each with its manifest; what the first call needs goes in chunks.
await Promise.all(
  DOMAINS.map((domain) =>
    build({
      ...common,
      entryPoints: { index: `packages/${domain}/src/index.ts` },
      outdir: `packages/${domain}/dist`,
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]',
      plugins: [manifestPlugin(manifests[domain])],
    }),
  ),
);

// 3. The sandbox's command line and the demo.
await Promise.all(
  ['cli', 'demo'].map((name) => build({ ...common, entryPoints: [`packages/sandbox/src/${name}.ts`], outfile: `packages/sandbox/dist/${name}.js` })),
);
