// Random tool arguments, many of them: every call is answered, none crashes a server, and no
// risky operation runs without confirmation.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { ALL_OPERATIONS, DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';
import { keyScanner, type KeyScanner } from './leaks.js';

const CALLS = 2_000;
let sandbox: Sandbox;
const servers: InProcess[] = [];
let keys: KeyScanner;

beforeAll(async () => {
  sandbox = await startSandbox({ sendStepMs: 60_000 });
  keys = keyScanner(...Object.values(sandbox.keys));
  for (const domain of Object.values(DOMAINS)) servers.push(await inProcess(domain, sandbox));
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await sandbox.close();
});

function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const strings = [
    '',
    '..',
    '.',
    'stats',
    '6281234567890',
    '0812-3456-7890',
    'x'.repeat(300),
    '\u202e\u200b',
    '<script>',
    '{{1}}',
    'TCK-1001',
    'ct_forged',
    '%2e%2e',
    'a/b',
    'null',
    '__proto__',
    'constructor',
  ];
  const value = (depth = 0): unknown => {
    const kind = Math.floor(next() * (depth > 2 ? 5 : 8));
    switch (kind) {
      case 0:
        return pick(strings);
      case 1:
        return Math.floor(next() * 2_000_000) - 1_000_000;
      case 2:
        return next() < 0.5;
      case 3:
        return null;
      case 4:
        return next() * 1e308;
      case 5:
        return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
      default:
        return Object.fromEntries(
          Array.from({ length: Math.floor(next() * 4) }, () => [
            pick(['id', 'name', 'msisdn', 'email', 'message', 'channel', 'users', 'ticketID', 'status', 'template', '__proto__', 'x']),
            value(depth + 1),
          ]),
        );
    }
  };
  return { next, pick, value };
}

// About 4 s alone; on two loaded cores (CI, another file beside it) it has taken 50 s and more.
it(`answers ${CALLS} random calls without crashing, and runs nothing risky unconfirmed`, async () => {
  const random = generator(20_261_122);
  const ids = ALL_OPERATIONS.map((op) => op.id);
  let answered = 0;
  for (let index = 0; index < CALLS; index++) {
    const server = random.pick(servers);
    const { tools } = await server.client.listTools();
    const tool = random.pick(tools);
    const args: Record<string, unknown> = {};
    if (random.next() < 0.9) args.operationId = random.next() < 0.8 ? random.pick(ids) : random.value();
    if (random.next() < 0.8) args.params = random.next() < 0.8 ? random.value() : { id: random.value(), ticketID: random.value(), message: random.value() };
    for (const key of ['limit', 'offset', 'fields', 'search', 'confirmationToken', 'unexpected']) if (random.next() < 0.15) args[key] = random.value();
    if (random.next() < 0.05) {
      // An unknown tool is a protocol error (invalid params), answered and survived.
      await expect(server.client.callTool({ name: 'nope', arguments: args })).rejects.toThrow(/-32602/);
    } else {
      const result = (await server.client.callTool({ name: tool.name, arguments: args })) as CallToolResult;
      expect(Array.isArray(result.content)).toBe(true);
      expect(keys.find(textOf(result))).toBeUndefined();
      expect(keys.find(JSON.stringify(result.structuredContent ?? null))).toBeUndefined();
    }
    answered++;
  }
  expect(answered).toBe(CALLS);
  for (const server of servers) expect((await server.client.listTools()).tools.length).toBeGreaterThan(0);
  for (const line of servers.flatMap((server) => server.logs)) expect(keys.find(line)).toBeUndefined();
  const risky = sandbox.carriedOut().filter((entry) => ALL_OPERATIONS.find((op) => op.id === entry.operationId)?.risk === 'destructive');
  expect(risky).toEqual([]);
  process.stderr.write(`fuzz: ${answered} random calls answered\n`);
}, 240_000);
