// Bundles each server (and the sandbox's CLI and demo) into one file: a host starts seven
// servers at every launch, and one file loads far faster than hundreds of modules.
// Type checking is `tsc` (run before this by `npm run build`); esbuild only transpiles and bundles.
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';

export const DOMAINS = ['contact', 'campaign', 'inbox', 'channel', 'product', 'billing', 'tenant'];

const entries = [
  ...DOMAINS.map((domain) => ({ in: `packages/${domain}/src/index.ts`, out: `packages/${domain}/dist/index.js` })),
  { in: 'packages/sandbox/src/cli.ts', out: 'packages/sandbox/dist/cli.js' },
  { in: 'packages/sandbox/src/demo.ts', out: 'packages/sandbox/dist/demo.js' },
];

await Promise.all([...DOMAINS, 'sandbox'].map((dir) => rm(`packages/${dir}/dist`, { recursive: true, force: true })));
await Promise.all(
  entries.map((entry) =>
    build({
      entryPoints: [entry.in],
      outfile: entry.out,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      minify: true,
      keepNames: true,
      sourcemap: true,
      legalComments: 'external',
      logLevel: 'warning',
      // Some dependencies are CommonJS and call require(); an ESM bundle needs one.
      banner: { js: "import { createRequire as __engageCreateRequire } from 'node:module'; const require = __engageCreateRequire(import.meta.url);" },
    }),
  ),
);
