// `npm run bench:compile-cache [-- --node /path/to/node] [--rounds N]`: what the servers' code
// cache (scripts/launcher.ts, every Node this project supports) saves at start. Alternating starts
// of the contact server with the cache off (NODE_DISABLE_COMPILE_CACHE=1, as a first start ever)
// and on (a cache written by an earlier start, in a fresh folder), each from spawn to the answer to
// tools/list through the v1 SDK client's stdio transport: the time, and the server's CPU time
// (every thread, from /proc). Measures only.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { serverEntry } from '../packages/sandbox/src/launch.js';
import { benchCacheHome, primeCodeCaches } from './code-cache.js';

const USAGE = 'usage: npm run bench:compile-cache [-- --node PATH] [-- --rounds N]  (N rounds of each start, default 15)';
/** The flags, or the usage (status 2 on a flag it does not know, rather than a stack trace). */
function compileCacheArguments(): { node?: string; rounds?: string } {
  try {
    const { values } = parseArgs({ options: { node: { type: 'string' }, rounds: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    return values;
  } catch (error) {
    process.stderr.write(`bench:compile-cache: ${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    process.exit(2);
  }
}
const values = compileCacheArguments();
const node = values.node ?? process.execPath;
const rounds = Number(values.rounds ?? 15);
const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
const env: Record<string, string> = { XDG_CACHE_HOME: benchCacheHome(), ENGAGE_API_KEY: 'eng_live_bench', ENGAGE_BASE_URL: 'http://127.0.0.1:9' };

const cpuMs = (pid: number) =>
  readdirSync(`/proc/${pid}/task`).reduce((sum, task) => sum + Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]), 0) / 1e6;

async function start(cache: boolean): Promise<{ ms: number; cpuMs: number }> {
  const started = performance.now();
  const client = new Client({ name: 'bench', version: '0' });
  const transport = new StdioClientTransport({
    command: node,
    args: [serverEntry('contact')],
    env: { PATH: process.env.PATH ?? '', ...env, ...(cache ? {} : { NODE_DISABLE_COMPILE_CACHE: '1' }) },
    stderr: 'ignore',
  });
  await client.connect(transport);
  await client.listTools();
  const ms = performance.now() - started;
  const cpu = cpuMs(transport.pid as number);
  await client.close();
  return { ms, cpuMs: cpu };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
await primeCodeCaches([serverEntry('contact')], env);
const runs = { off: [] as Array<{ ms: number; cpuMs: number }>, on: [] as Array<{ ms: number; cpuMs: number }> };
for (let round = 0; round < rounds; round++) {
  for (const cache of round % 2 ? [true, false] : [false, true]) runs[cache ? 'on' : 'off'].push(await start(cache));
}
const row = (label: string, side: Array<{ ms: number; cpuMs: number }>, base?: Array<{ ms: number; cpuMs: number }>) => {
  const ms = median(side.map((one) => one.ms));
  const cpu = median(side.map((one) => one.cpuMs));
  const ratio = (value: number, of: number) => ` (${(value / of).toFixed(2)}×)`;
  const baseMs = base && median(base.map((one) => one.ms));
  const baseCpu = base && median(base.map((one) => one.cpuMs));
  return `| ${label} | ${ms.toFixed(1)}${baseMs ? ratio(ms, baseMs) : ''} | ${cpu.toFixed(1)}${baseCpu ? ratio(cpu, baseCpu) : ''} |`;
};
process.stdout.write(
  [
    `Node ${version}, contact server, medians of ${rounds} alternating starts (spawn to tools/list, v1 SDK client):`,
    '',
    '| code cache | start (ms) | server CPU (ms) |',
    '|---|---|---|',
    row('off (NODE_DISABLE_COMPILE_CACHE=1: a first start)', runs.off),
    row('on (written by an earlier start)', runs.on, runs.off),
    '',
  ].join('\n'),
);
