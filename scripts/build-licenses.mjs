// The licences of the other people's code a build bundles. A published server's files carry zod,
// undici and dotenv (MIT, BSD-2-Clause), the MCP SDK and OpenTelemetry (Apache-2.0), and the MIT,
// BSD and Apache licences all ask that their text (and an Apache package's NOTICE) travel with
// every copy; esbuild keeps only the few comments marked as legal. So each build lists the
// packages whose code reached its output (from esbuild's metafile) and writes their licence files,
// as each package ships them, into one text file beside the bundles.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

/** The file every package's dist/ gets: its name fits the packages' `dist/**\/*.LEGAL.txt`. */
export const LICENSES_FILE = 'third-party-licenses.LEGAL.txt';

const MODULES = `${sep}node_modules${sep}`;

/** The folder of the npm package holding `file` (the innermost one), or undefined for our own code. */
function packageDirOf(file) {
  const path = resolve(file);
  const at = path.lastIndexOf(MODULES);
  if (at < 0) return undefined;
  const rest = path.slice(at + MODULES.length).split(sep);
  return join(path.slice(0, at + MODULES.length), ...rest.slice(0, rest[0]?.startsWith('@') ? 2 : 1));
}

/** The package folders whose code is in a build's output (esbuild's metafile; tree-shaken files left out). */
export function bundledPackages(metafile) {
  const dirs = new Set();
  for (const output of Object.values(metafile.outputs)) {
    for (const [file, { bytesInOutput }] of Object.entries(output.inputs)) {
      // A plugin's namespace (`engage-manifest:manifest`) is ours; a file elsewhere is a path.
      const dir = bytesInOutput > 0 && !/^[\w-]+:/.test(file) ? packageDirOf(file) : undefined;
      if (dir) dirs.add(dir);
    }
  }
  return dirs;
}

const LEGAL_FILE = /^(licen[cs]e|copying|notice)([.-].*)?$/i;

/** One package as the file lists it: name, version, declared licence, and its licence files' text. */
function describe(dir) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const files = readdirSync(dir)
    .filter((name) => LEGAL_FILE.test(name))
    .sort();
  const text = files.map((name) => readFileSync(join(dir, name), 'utf8').trim()).join('\n\n');
  const declared = typeof pkg.license === 'string' ? pkg.license : 'not declared';
  return { id: `${pkg.name}@${pkg.version}`, declared, text: text || `(${pkg.name} ships no licence file; its package.json says: ${declared})` };
}

/**
 * Writes `outFile`: every package of `dirs` with its licence, then each distinct licence text once,
 * under the packages it covers (a dozen OpenTelemetry packages share one Apache-2.0 text).
 */
export function writeLicenses(outFile, dirs) {
  const unique = new Map();
  for (const dir of dirs) {
    const entry = describe(dir);
    unique.set(entry.id, entry);
  }
  const packages = [...unique.values()].sort((a, b) => a.id.localeCompare(b.id, 'en'));
  const byText = new Map();
  for (const entry of packages) byText.set(entry.text, [...(byText.get(entry.text) ?? []), entry.id]);
  const lines = [
    "Third-party software bundled in this package's files, and the licence each is distributed under.",
    '',
    ...packages.map((entry) => `- ${entry.id} (${entry.declared})`),
  ];
  for (const [text, ids] of byText) lines.push('', '-'.repeat(78), ids.join(', '), '-'.repeat(78), '', text);
  writeFileSync(outFile, `${lines.join('\n')}\n`);
}

/** The package folders of a list written by `rememberPackages`, for a later build that bundles its output. */
export function recalledPackages(listFile) {
  return (JSON.parse(readFileSync(listFile, 'utf8')) ?? []).map((dir) => resolve(dir));
}

/** Writes the package folders (relative to the working folder) for a later build to recall. */
export function rememberPackages(listFile, dirs) {
  writeFileSync(listFile, `${JSON.stringify([...dirs].map((dir) => relative('.', dir)).sort(), null, 2)}\n`);
}
