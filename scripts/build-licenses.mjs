// The licences of the other people's code a build bundles. A published server's files carry zod,
// undici and dotenv (MIT, BSD-2-Clause), the MCP SDK and OpenTelemetry (Apache-2.0), and the MIT,
// BSD and Apache licences all ask that their text (and an Apache package's NOTICE) travel with
// every copy; esbuild keeps only the few comments marked as legal. So each build lists the
// packages whose code reached its output (from esbuild's metafile) and writes their licence files,
// as each package ships them, into one text file beside the bundles.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

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

/**
 * The package folders whose code is in a build's output (esbuild's metafile; tree-shaken files left
 * out), and those of the packages a bundled package's own files inlined (inlinedPackages).
 */
export function bundledPackages(metafile) {
  const dirs = new Set();
  for (const output of Object.values(metafile.outputs)) {
    for (const [file, { bytesInOutput }] of Object.entries(output.inputs)) {
      // A plugin's namespace (`engage-manifest:manifest`) is ours; a file elsewhere is a path.
      const dir = bytesInOutput > 0 && !/^[\w-]+:/.test(file) ? packageDirOf(file) : undefined;
      if (!dir) continue;
      dirs.add(dir);
      for (const inlined of inlinedPackages(file, dir)) dirs.add(inlined);
    }
  }
  return dirs;
}

/** Where licences are kept of packages inlined by a package we bundle that npm did not install here (one folder each, named `<name>@<version>`, `/` as `+`). */
const KEPT_LICENCES = fileURLToPath(new URL('./inlined-licenses/', import.meta.url));

/**
 * The packages a bundled package's file itself inlined, as its source map names them: the MCP
 * SDK's files hold @cfworker/json-schema and content-type (both MIT), which our metafile sees as
 * the SDK's own code. A package of the same npm scope is the same project (its licence covers it).
 * Each one's folder: the copy npm installed here when it is that version, else the one kept in
 * scripts/inlined-licenses; none is a failed build, never a licence left out.
 */
function inlinedPackages(file, hostDir) {
  const sources = sourcesOf(file);
  const host = JSON.parse(readFileSync(join(hostDir, 'package.json'), 'utf8')).name;
  const scopeOf = (name) => (name.startsWith('@') ? name.split('/')[0] : undefined);
  const found = new Set();
  for (const source of sources) {
    const named = packageNamedBy(source);
    if (!named || named.name === host || (scopeOf(host) && scopeOf(named.name) === scopeOf(host))) continue;
    const installed = join('node_modules', named.name);
    const installedVersion = existsSync(join(installed, 'package.json'))
      ? JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version
      : undefined;
    const kept = join(KEPT_LICENCES, `${named.name.replace('/', '+')}@${named.version ?? installedVersion}`);
    if (installedVersion !== undefined && (named.version === undefined || named.version === installedVersion)) found.add(resolve(installed));
    else if (existsSync(join(kept, 'package.json'))) found.add(kept);
    else
      throw new Error(
        `${file} inlines ${named.name}@${named.version ?? '?'}, whose licence is neither installed nor kept in ${relative('.', kept)}: add its package.json and licence file there.`,
      );
  }
  return found;
}

/** The `sources` of a file's own source map (its sourceMappingURL: a file beside it, or inline), or none. */
function sourcesOf(file) {
  const text = readFileSync(file, 'utf8');
  // The last such comment, which ends the file (an inline map is longer than any fixed tail).
  const at = text.lastIndexOf('sourceMappingURL=');
  const url = at < 0 ? undefined : /\/[/*][#@]\s*sourceMappingURL=(\S+?)\s*(?:\*\/)?\s*$/.exec(text.slice(Math.max(0, at - 8)))?.[1];
  if (!url) return [];
  try {
    const inline = /^data:application\/json[^,]*;base64,(.*)$/.exec(url)?.[1];
    const map = JSON.parse(inline ? Buffer.from(inline, 'base64').toString('utf8') : readFileSync(join(dirname(file), url), 'utf8'));
    return Array.isArray(map.sources) ? map.sources : [];
  } catch {
    return []; // a map not shipped or unreadable: nothing known inlined
  }
}

/** The package a source path lies in (its last node_modules folder), with its version where pnpm's store path names it. */
function packageNamedBy(source) {
  const at = source.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const parts = source.slice(at + 'node_modules/'.length).split('/');
  const name = parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  if (!name || name === '.pnpm') return undefined;
  const store = /\.pnpm\/((?:@[^/]+\+)?[^/@]+)@([^/_(]+)/.exec(source.slice(0, at));
  const version = store && store[1].replace('+', '/') === name ? store[2] : undefined;
  return { name, version };
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
  // Without a licence file, the copyright holder is the package's author.
  const author = typeof pkg.author === 'string' ? pkg.author : pkg.author?.name;
  const said = `${declared}${author ? `, by ${author}` : ''}`;
  return { id: `${pkg.name}@${pkg.version}`, declared, text: text || `(${pkg.name} ships no licence file; its package.json says: ${said})` };
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
