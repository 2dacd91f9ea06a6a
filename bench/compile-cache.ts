// `npm run bench:compile-cache [-- --node /path/to/node]`: what Node's module compile cache
// (module.enableCompileCache, Node 22.1 and later, switched on by each server's launcher) saves at
// cold start. Alternating runs of the contact server with the cache off (NODE_DISABLE_COMPILE_CACHE)
// and on (a warm cache in a fresh HOME), timed from spawn to the answer to tools/list through the
// v1 SDK client's stdio transport. Measures only. On Node 20 the launcher's call is a no-op.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { serverEntry } from '../packages/sandbox/src/launch.js';

const { values } = parseArgs({ options: { node: { type: 'string' }, rounds: { type: 'string' } } });
const node = values.node ?? process.execPath;
const rounds = Number(values.rounds ?? 15);
const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
const home = mkdtempSync(join(tmpdir(), 'engage-compile-cache-'));

async function coldStart(cache: boolean): Promise<number> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, ENGAGE_API_KEY: 'eng_live_bench', ENGAGE_BASE_URL: 'http://127.0.0.1:9' };
  if (!cache) env.NODE_DISABLE_COMPILE_CACHE = '1';
  const started = performance.now();
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(new StdioClientTransport({ command: node, args: [serverEntry('contact')], env, stderr: 'ignore' }));
  await client.listTools();
  const ms = performance.now() - started;
  await client.close();
  return ms;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
try {
  await coldStart(true); // fills the cache
  const times = { off: [] as number[], on: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    for (const cache of round % 2 ? [true, false] : [false, true]) times[cache ? 'on' : 'off'].push(await coldStart(cache));
  }
  const off = median(times.off);
  const on = median(times.on);
  process.stdout.write(
    [
      `Node ${version}, contact server, medians of ${rounds} alternating runs (spawn to tools/list, v1 SDK client):`,
      '',
      '| compile cache | cold start (ms) |',
      '|---|---|',
      `| off (NODE_DISABLE_COMPILE_CACHE=1) | ${off.toFixed(1)} |`,
      `| on, warm | ${on.toFixed(1)} (${(((on - off) / off) * 100).toFixed(0)}%) |`,
      '',
    ].join('\n'),
  );
} finally {
  rmSync(home, { recursive: true, force: true });
}
