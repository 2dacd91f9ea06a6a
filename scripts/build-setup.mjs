// Bundles the setup command (packages/setup) into one file with no runtime dependency, left
// readable on purpose: people run it with their API key and may want to read what it does.
import { build } from 'esbuild';

await build({
  entryPoints: ['packages/setup/src/cli.ts'],
  outfile: 'packages/setup/dist/cli.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  legalComments: 'inline',
  logLevel: 'warning',
});
