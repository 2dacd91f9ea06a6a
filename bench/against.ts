// `npm run bench -- --against DIR`: this checkout's built servers side by side with another
// checkout's (a worktree of the commit before a change, say, built with `npm ci`), in one run,
// alternating which goes first. Cold start to tools/list and resident memory (contact), and the
// server's own CPU time per call (process CPU, every thread, from /proc: not wall-clock time, so a
// noisy machine moves it little) for a small read, a 20-record list and a 500-record page.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

type Side = 'this' | 'other';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_CALLS ?? 400);

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = (sorted.length - 1) / 2;
  return ((sorted[Math.floor(middle)] as number) + (sorted[Math.ceil(middle)] as number)) / 2;
};

/** CPU time a process has used so far, every thread (ns, from each task's schedstat). */
function cpuNs(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return total;
}

const rssKB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** A bare line-delimited JSON-RPC peer over a server's stdio (the bench measures the server, not a client). */
function serverProcess(entry: string, env: Record<string, string>) {
  const started = performance.now();
  const child = spawn(process.execPath, [entry], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'ignore'] });
  const waiting = new Map<number, (message: unknown) => void>();
  let buffer = '';
  let nextId = 1;
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
      const message = JSON.parse(buffer.slice(0, newline)) as { id?: number };
      buffer = buffer.slice(newline + 1);
      if (message.id !== undefined) waiting.get(message.id)?.(message);
    }
  });
  const request = (method: string, params: unknown) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const open = async () => {
    await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    await request('tools/list', {});
    return performance.now() - started;
  };
  return { child, request, open, close: () => child.kill() };
}

type Sandboxes = Record<'small' | 'large', { baseUrl: string; key: string }>;
/** `small`: the seeded tenant (40 contacts); `large`: 500 contacts. */
const CASES: Array<{ name: string; domain: string; tool: string; args: Record<string, unknown>; sandbox: keyof Sandboxes }> = [
  { name: 'billing.quota', domain: 'billing', tool: 'billing_get', args: { operationId: 'billing.quota' }, sandbox: 'small' },
  { name: 'contact.list, 20 of 40 records', domain: 'contact', tool: 'contact_read', args: { operationId: 'contact.list', limit: 20 }, sandbox: 'small' },
  { name: 'contact.list, a 500-record page', domain: 'contact', tool: 'contact_read', args: { operationId: 'contact.list', limit: 500 }, sandbox: 'large' },
];

/** One side's figures for one round: contact's start and memory, then each case's CPU per warm call. */
async function measure(root: string, sandboxes: Sandboxes): Promise<Record<string, number>> {
  const entry = (domain: string) => join(root, `packages/${domain}/dist/index.js`);
  const env = (which: keyof Sandboxes) => ({ ENGAGE_BASE_URL: sandboxes[which].baseUrl, ENGAGE_API_KEY: sandboxes[which].key });
  const out: Record<string, number> = {};
  const cold = serverProcess(entry('contact'), env('small'));
  out.startMs = await cold.open();
  out.rssMiB = rssKB(cold.child.pid as number) / 1024;
  cold.close();
  for (const one of CASES) {
    const server = serverProcess(entry(one.domain), env(one.sandbox));
    await server.open();
    const call = () => server.request('tools/call', { name: one.tool, arguments: one.args });
    for (let warm = 0; warm < 50; warm++) await call();
    const before = cpuNs(server.child.pid as number);
    for (let index = 0; index < CALLS; index++) await call();
    out[one.name] = (cpuNs(server.child.pid as number) - before) / CALLS / 1e6;
    server.close();
  }
  return out;
}

export async function benchAgainst(thisRoot: string, otherRoot: string, sandboxes: Sandboxes): Promise<string> {
  const figures: Record<Side, Array<Record<string, number>>> = { this: [], other: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 ? (['other', 'this'] as const) : (['this', 'other'] as const)) {
      figures[side].push(await measure(side === 'this' ? thisRoot : otherRoot, sandboxes));
    }
  }
  const of = (side: Side, key: string) => median(figures[side].map((round) => round[key] as number));
  const rows = [
    ['contact: cold start to tools/list (ms)', 'startMs', 1],
    ['contact: resident memory (MiB)', 'rssMiB', 1],
    ...CASES.map((one) => [`server CPU per warm call, ${one.name} (ms)`, one.name, 3] as const),
  ] as const;
  return [
    `This checkout side by side with ${otherRoot}: medians of ${ROUNDS} alternating rounds, ${CALLS} calls per CPU figure.`,
    '',
    '| measure | this checkout | the other | × the other |',
    '|---|---|---|---|',
    ...rows.map(
      ([label, key, digits]) =>
        `| ${label} | ${of('this', key).toFixed(digits)} | ${of('other', key).toFixed(digits)} | ${(of('this', key) / of('other', key)).toFixed(2)} |`,
    ),
  ].join('\n');
}
