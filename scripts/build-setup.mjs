// Bundles the setup command (packages/setup) into one file with no runtime dependency, left
// readable on purpose: people run it with their API key and may want to read what it does.
import { rm } from 'node:fs/promises';
import { build } from 'esbuild';
import { bundledPackages, LICENSES_FILE, writeLicenses } from './build-licenses.mjs';

// Emptied first: the package ships dist/**/*.js, so a file an earlier build left there would ship too.
await rm('packages/setup/dist', { recursive: true, force: true });
const result = await build({
  entryPoints: ['packages/setup/src/cli.ts'],
  outfile: 'packages/setup/dist/cli.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  legalComments: 'inline',
  logLevel: 'warning',
  metafile: true,
  // The configuration code it shares with the servers reaches dotenv, which is CommonJS and calls require().
  banner: { js: "import { createRequire as __engageCreateRequire } from 'node:module'; const require = __engageCreateRequire(import.meta.url);" },
});
// dotenv is BSD-2-Clause: its licence goes with the command (the package ships dist/**/*.LEGAL.txt).
writeLicenses(`packages/setup/dist/${LICENSES_FILE}`, bundledPackages(result.metafile));
