// Remote mode's Redis client against node-redis and ioredis: bundle size (minified, esbuild) and
// a call's latency and CPU (sequential SET NX PX, a spent-confirmation write, over loopback), each
// client in its own process, five rounds (ROUNDS) of 20,000 calls (CALLS). The README's
// Development section quotes it. Usage:
//   npm install --prefix /tmp/redis-clients ioredis@5 @redis/client@5   (outside the workspace)
//   npm run build && node bench/redis-clients.mjs /tmp/redis-clients
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const CALLS = 20_000;
const ROUNDS = 5;
const [, script, where, client, url] = process.argv;

async function measure() {
  const load = await import(join(where, 'dist', `${client}.mjs`));
  let call;
  let close;
  if (client === 'ours') {
    const redis = await load.connectRedis(url);
    [call, close] = [(args) => redis.command(args), () => redis.close()];
  } else if (client === 'ioredis') {
    const redis = new load.default(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false, lazyConnect: true });
    await redis.connect();
    [call, close] = [(args) => redis.call(...args), () => redis.quit()];
  } else {
    const redis = load.createClient({ url, disableOfflineQueue: true });
    await redis.connect();
    [call, close] = [(args) => redis.sendCommand(args.map(String)), () => redis.quit()];
  }
  const setNx = (index) => call(['SET', `bench:${client}:${index}`, '1', 'NX', 'PX', 60_000]);
  for (let index = 1; index <= 2_000; index++) await setNx(-index); // warm-up
  const times = new Float64Array(CALLS);
  const cpuBefore = process.cpuUsage();
  for (let index = 0; index < CALLS; index++) {
    const started = performance.now();
    await setNx(index);
    times[index] = performance.now() - started;
  }
  const cpu = process.cpuUsage(cpuBefore);
  times.sort();
  const micros = (ms) => Math.round(ms * 10_000) / 10;
  const cpuPerCallUs = Math.round(((cpu.user + cpu.system) / CALLS) * 10) / 10;
  const result = { client, p50: micros(times[CALLS >> 1]), p99: micros(times[Math.floor(CALLS * 0.99)]), cpuPerCallUs };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await close();
  process.exit(0);
}

async function bundles() {
  const out = join(where, 'dist');
  mkdirSync(out, { recursive: true });
  const stub = join(out, 'shared-stub.mjs');
  writeFileSync(stub, 'export class InputError extends Error {}\nexport class Pacer {}\n');
  const banner = { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" };
  const common = { bundle: true, platform: 'node', format: 'esm', target: 'node20', minify: true, logLevel: 'warning', banner };
  const entry = (contents) => ({ stdin: { contents, resolveDir: where } });
  await Promise.all([
    // Only the client: the core's two names it imports are stubbed.
    build({ ...common, entryPoints: ['packages/http/src/redis.ts'], outfile: join(out, 'ours.mjs'), alias: { '@engage-mcp/shared': stub } }),
    build({ ...common, ...entry("export { default } from 'ioredis';"), outfile: join(out, 'ioredis.mjs') }),
    build({ ...common, ...entry("export { createClient } from '@redis/client';"), outfile: join(out, 'node-redis.mjs') }),
  ]);
  for (const name of ['ours', 'ioredis', 'node-redis']) {
    const file = join(out, `${name}.mjs`);
    console.log(JSON.stringify({ client: name, bundleBytes: statSync(file).size, gzipBytes: gzipSync(readFileSync(file), { level: 9 }).length }));
  }
}

async function main() {
  await bundles();
  const port = 40_000 + Math.floor(Math.random() * 20_000);
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', ''];
  const server = spawn(process.env.ENGAGE_TEST_REDIS_SERVER ?? '/usr/bin/redis-server', args, { stdio: 'ignore' });
  await new Promise((done) => setTimeout(done, 500));
  const runs = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of ['ours', 'ioredis', 'node-redis']) {
        runs.push(JSON.parse(execFileSync(process.execPath, [script, where, name, `redis://127.0.0.1:${port}`], { encoding: 'utf8' })));
      }
    }
  } finally {
    server.kill();
  }
  // The machine may be shared: the median of the rounds, per client and figure.
  const median = (values) => values.sort((a, b) => a - b)[values.length >> 1];
  for (const name of ['ours', 'ioredis', 'node-redis']) {
    const mine = runs.filter((run) => run.client === name);
    const summary = Object.fromEntries(['p50', 'p99', 'cpuPerCallUs'].map((figure) => [figure, median(mine.map((run) => run[figure]))]));
    console.log(JSON.stringify({ client: name, rounds: mine.length, ...summary }));
  }
}

if (!where) {
  process.stderr.write('usage: node bench/redis-clients.mjs <folder with ioredis and @redis/client installed>\n');
  process.exit(1);
}
await (client ? measure() : main());
