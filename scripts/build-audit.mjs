// Bundles the audit command (packages/audit) into one file with no runtime dependency, left
// readable: people run it to check a record of what was done with their key.
import { build } from 'esbuild';

await build({
  entryPoints: ['packages/audit/src/cli.ts'],
  outfile: 'packages/audit/dist/cli.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  legalComments: 'inline',
  logLevel: 'warning',
  // The state directory's default comes from the configuration module, which reaches dotenv (CommonJS, calls require()).
  banner: { js: "import { createRequire as __engageCreateRequire } from 'node:module'; const require = __engageCreateRequire(import.meta.url);" },
});
