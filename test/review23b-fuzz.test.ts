// Hostile arguments, a few hundred per tool of every server, from a seeded generator: wrong
// types, missing and extra fields, operationId lookalikes (case, confusables, zero-width and
// trailing characters), __proto__/constructor/prototype keys at every level, path params with
// ../ %2F ? # CR LF NUL, 1 MB strings, deep nesting, 1e309, -0, huge arrays, lone surrogates, and
// valid operations with slightly broken params. Every call is answered (no protocol error, the
// server answers the next one); a refusal says so with text that names the operation or the field
// at fault, and leaks nothing of the server's insides; and what the server refused sent nothing
// that changes anything (the sandbox's own record), nor did any write run without the yes its
// risk requires. The seed is printed with every failure: FUZZ_SEED=<seed> repeats a run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { validateParams } from '../shared/src/call/validate.js';
import { ALL_OPERATIONS, DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';
import { seeded, type Seeded } from './seeded.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_128);
/** Calls per tool: two tools per server, so twice this per server. */
const PER_TOOL = Number(process.env.FUZZ_CALLS ?? 160);

let sandbox: Sandbox;
/** Per domain: a server that gates every write (ENGAGE_CONFIRM=all), and one with the default policy (destructive ones gated). */
const servers: Record<string, { all: InProcess; standard: InProcess }> = {};
/** Real ids of tenant A, for valid params to break slightly. */
let ids: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ sendStepMs: 60_000, rateLimit: 1_000_000 });
  const tenant = sandbox.tenant('A');
  ids = {
    contact: tenant.contacts[0]!._id,
    campaign: tenant.campaigns[0]!._id,
    ticket: tenant.tickets[0]!.ticketID,
    channel: tenant.channels[0]!.channelId,
    product: tenant.products[0]!._id,
    order: tenant.payments[0]!.orderID,
  };
  for (const domain of Object.values(DOMAINS)) {
    servers[domain.name] = {
      all: await inProcess(domain, sandbox, { env: { ENGAGE_CONFIRM: 'all' } }),
      standard: await inProcess(domain, sandbox),
    };
  }
}, 60_000);
afterAll(async () => {
  await Promise.all(Object.values(servers).flatMap(({ all, standard }) => [all.close(), standard.close()]));
  await sandbox?.close();
});

type Random = Seeded;

const MEGABYTE = 'x'.repeat(1024 * 1024);
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** Sets a key as an own, enumerable property (a literal's __proto__ would set the prototype instead), as JSON.parse does. */
function own(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
  return target;
}

/**
 * JSON text as a host would send it, with what JSON.stringify cannot write: 1e309 (JSON.parse
 * reads it as Infinity) and -0. Parsed back with JSON.parse, as the stdio transport does, so
 * __proto__ keys arrive as own properties.
 */
function toJson(value: unknown): string {
  if (typeof value === 'number') {
    if (value === Number.POSITIVE_INFINITY) return '1e309';
    if (value === Number.NEGATIVE_INFINITY) return '-1e309';
    if (Object.is(value, -0)) return '-0';
    return Number.isNaN(value) ? 'null' : JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, inner]) => `${JSON.stringify(key)}:${toJson(inner)}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** Strings a hostile model sends: path tricks, control characters, invisible and lookalike text, long text. */
function hostileString(random: Random, base = 'abc'): string {
  switch (Math.floor(random.next() * 22)) {
    case 0:
      return '';
    case 1:
      return `../${base}`;
    case 2:
      return `${base}%2F..%2Fadmin`;
    case 3:
      return `${base}?x=1`;
    case 4:
      return `${base}#frag`;
    case 5:
      return `${base}\r\nX-Injected: 1`;
    case 6:
      return `${base}\u0000`;
    case 7:
      return `${base} `;
    case 8:
      return `\u200b${base}`;
    case 9:
      return `${base}\ud800`;
    case 10:
      return `\udc00${base}`;
    case 11:
      return random.chance(0.3) ? MEGABYTE : 'y'.repeat(5_000);
    case 12:
      return '..';
    case 13:
      return '.';
    case 14:
      return 'NaN';
    case 15:
      return '\u202eevil';
    case 16:
      return base.replace(/a/g, '\u0430').replace(/e/g, '\u0435').replace(/o/g, '\u043e');
    case 17:
      return '%00';
    case 18:
      return `${base}/`;
    case 19:
      return '{{1}}';
    case 20:
      return '٠٨١٢٣٤٥٦٧٨٩٠';
    default:
      return PROTO_KEYS[Math.floor(random.next() * 3)] as string;
  }
}

function hostileNumber(random: Random): number | string {
  return random.pick([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 'NaN', 1e308, -1, 0, 2 ** 53 + 1, 0.5, '5', 'Infinity', 1e-320]);
}

/** A nest of `depth` levels, built without recursion. */
function nest(depth: number, array: boolean): unknown {
  let value: unknown = 'deep';
  for (let level = 0; level < depth; level++) value = array ? [value] : { a: value };
  return value;
}

function hostileValue(random: Random, depth = 0): unknown {
  switch (Math.floor(random.next() * (depth > 2 ? 6 : 10))) {
    case 0:
      return hostileString(random);
    case 1:
      return hostileNumber(random);
    case 2:
      return random.chance(0.5);
    case 3:
      return null;
    case 4:
      return random.pick(['6281234567890', 'TCK-1001', ids.contact, ids.campaign, 'whatsapp', 'open']);
    case 5:
      return random.chance(0.5) ? nest(random.pick([17, 64, 2_000]), random.chance(0.5)) : [];
    case 6:
      return random.chance(0.1)
        ? Array.from({ length: 200_000 }, () => 0)
        : Array.from({ length: Math.floor(random.next() * 4) }, () => hostileValue(random, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let index = Math.floor(random.next() * 4); index > 0; index--)
        own(object, random.pick(['id', 'name', 'msisdn', 'message', 'users', ...PROTO_KEYS, 'x y', '']), hostileValue(random, depth + 1));
      return object;
    }
  }
}

/** Valid params for each operation, against tenant A's seeded data. */
function validParams(operationId: string): Record<string, unknown> {
  const table: Record<string, Record<string, unknown>> = {
    'contact.byCampaign': { campaignID: ids.campaign },
    'contact.create': { name: 'Fuzz Person', msisdn: '6281234500001' },
    'contact.update': { id: ids.contact, name: 'Renamed' },
    'contact.delete': { id: ids.contact },
    'contact.import': { users: [{ name: 'One', msisdn: '6281234500002' }] },
    'campaign.progress': { id: ids.campaign },
    'campaign.create': { name: 'Fuzz campaign', message: 'Hello', channel: 'whatsapp' },
    'campaign.send': { id: ids.campaign },
    'campaign.cancel': { id: ids.campaign },
    'campaign.delete': { id: ids.campaign },
    'inbox.ticket.get': { ticketID: ids.ticket },
    'inbox.ticket.byStatus': { status: 'open' },
    'inbox.ticket.create': { msisdn: '6281234500003', channel: 'whatsapp', message: 'Hi' },
    'inbox.ticket.reply': { ticketID: ids.ticket, message: 'Thanks' },
    'inbox.ticket.close': { ticketID: ids.ticket },
    'channel.get': { channelId: ids.channel },
    'channel.whatsapp.send': { msisdn: '6281234500004', message: 'Hello' },
    'product.get': { productID: ids.product },
    'product.create': { name: 'Fuzz product', price: 1000 },
    'product.update': { productID: ids.product, price: 2000 },
    'product.delete': { productID: ids.product },
    'billing.payment.get': { orderID: ids.order },
  };
  return { ...(table[operationId] ?? {}) };
}

/** An operationId near a real one: case, separators, confusables, invisible and trailing characters. */
function lookalike(random: Random, id: string): string {
  switch (Math.floor(random.next() * 10)) {
    case 0:
      return id.toUpperCase();
    case 1:
      return `${id} `;
    case 2:
      return ` ${id}`;
    case 3:
      return id.replace('.', '.\u200b');
    case 4:
      return id.replace(/o/, '\u043e').replace(/e/, '\u0435');
    case 5:
      return id.replace(/\./g, '_');
    case 6:
      return id.replace('.', '\uff0e');
    case 7:
      return `${id}\u0000`;
    case 8:
      return `${id}\n`;
    default:
      return id.slice(0, -1);
  }
}

/** One slight break of valid params: a field dropped, retyped, poisoned or added. */
function breakParams(random: Random, params: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(params);
  const key = keys.length > 0 && random.chance(0.8) ? random.pick(keys) : random.pick(['extra', ...PROTO_KEYS, 'limit', 'confirmationToken']);
  switch (Math.floor(random.next() * 6)) {
    case 0:
      delete params[key];
      return params;
    case 1:
      return own(params, key, hostileNumber(random));
    case 2:
      return own(params, key, hostileString(random, String(params[key] ?? 'abc')));
    case 3:
      return own(params, key, hostileValue(random));
    case 4:
      return own(params, random.pick(PROTO_KEYS), random.chance(0.5) ? { [key]: '../x', id: '../../admin', price: -1 } : 'x');
    default:
      return own(params, key, random.chance(0.5) ? [params[key]] : { value: params[key] });
  }
}

interface Plan {
  toolName: string;
  operationIds: readonly string[];
  kind: 'read' | 'action';
}

/** One hostile argument object for a tool. */
function hostileArguments(random: Random, plan: Plan): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const id = random.pick(plan.operationIds);
  const roll = random.next();
  if (roll < 0.45) args.operationId = id;
  else if (roll < 0.7) args.operationId = lookalike(random, id);
  else if (roll < 0.78) args.operationId = random.pick(ALL_OPERATIONS).id;
  else if (roll < 0.95) args.operationId = hostileValue(random);
  // else: missing
  const shape = random.next();
  if (shape < 0.45) args.params = breakParams(random, validParams(id));
  else if (shape < 0.65) args.params = validParams(id);
  else if (shape < 0.9) args.params = hostileValue(random);
  // else: no params
  const extras = ['limit', 'offset', 'fields', 'search', 'confirmationToken', 'idempotencyKey', 'quietHoursOverride', 'unexpected', ...PROTO_KEYS];
  for (const name of extras) {
    if (!random.chance(0.04)) continue;
    const value = random.chance(0.5) ? hostileValue(random) : random.chance(0.5) ? hostileString(random) : hostileNumber(random);
    own(args, name, value);
  }
  return args;
}

/** A token a preview gave, tampered with: a character, case, spaces, invisible text, or a prefix of it. */
function tamperToken(random: Random, token: string): string {
  switch (Math.floor(random.next() * 7)) {
    case 0:
      return `${token} `;
    case 1:
      return token.toUpperCase();
    case 2:
      return `${token.slice(0, 5)}\u200b${token.slice(5)}`;
    case 3:
      return token.slice(0, -1);
    case 4:
      return `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    case 5:
      return `${token}${token}`;
    default:
      return token.replace(/[a-z]/, '\u0430');
  }
}

/**
 * The second call of a gated write: a preview's token, sent back with the call changed a little
 * (the token, the params, or the operation). `legit` only when nothing changed after all.
 */
async function tokenReplay(random: Random, server: InProcess, plan: Plan): Promise<{ args: Record<string, unknown>; legit: boolean } | undefined> {
  const operationId = random.pick(plan.operationIds);
  const first = (await server.client.callTool({ name: plan.toolName, arguments: { operationId, params: validParams(operationId) } })) as CallToolResult;
  const token = (first.structuredContent as { confirmationToken?: string } | undefined)?.confirmationToken;
  if (!token) return undefined;
  const args: Record<string, unknown> = { operationId, params: validParams(operationId), confirmationToken: token };
  const change = random.next();
  if (change < 0.35) args.confirmationToken = tamperToken(random, token);
  else if (change < 0.75) args.params = breakParams(random, validParams(operationId));
  else if (change < 0.9) args.operationId = random.pick(plan.operationIds);
  else own(args, random.pick([...PROTO_KEYS, 'idempotencyKey']), random.chance(0.5) ? { confirmationToken: 'x' } : 'k-1');
  // The same call after all: an idempotencyKey is not part of what a yes binds, and a top-level
  // __proto__ never reaches the server (the SDK's parse of the request drops it).
  const extras = Object.keys(args).filter((key) => !['operationId', 'params', 'confirmationToken', '__proto__', 'idempotencyKey'].includes(key));
  const legit = args.confirmationToken === token && args.operationId === operationId && sameWrite(operationId, args.params) && extras.length === 0;
  return { args, legit };
}

/** Whether params are, once validated as the server does (a number's spaces trimmed, say), the valid ones the preview was for. */
function sameWrite(operationId: string, params: unknown): boolean {
  const op = ALL_OPERATIONS.find((candidate) => candidate.id === operationId)!;
  try {
    return JSON.stringify(validateParams(op, params)) === JSON.stringify(validateParams(op, validParams(operationId)));
  } catch {
    return false;
  }
}

/** What the server told the model, and what the sandbox saw while it did. */
interface Observed {
  args: string;
  result: CallToolResult;
  text: string;
  requests: ReturnType<Sandbox['requests']>;
  carried: ReturnType<Sandbox['carriedOut']>;
}

const INTERNALS = [
  /\n\s+at \S+ \(?[^)]*:\d+:\d+\)?/, // a stack frame
  /\b(?:TypeError|RangeError|ReferenceError|SyntaxError|ZodError|UpstreamError|InputError|GuardStateError)\b/,
  /(?:\/|\\)(?:src|dist|node_modules)(?:\/|\\)\S+\.[cm]?[jt]s\b/,
  /\[object Object\]/,
  /\bundefined is not\b|Cannot read propert/,
  /an (?:unknown |unexpected )?error occurred/i,
];

const risk = (operationId: string) => ALL_OPERATIONS.find((op) => op.id === operationId)?.risk;

/** The invariants of one call; returns what is wrong, or nothing. */
function problemsOf(plan: Plan, policy: 'all' | 'standard', observed: Observed, legitToken = false): string[] {
  const problems: string[] = [];
  const { result, text, requests, carried } = observed;
  if (!Array.isArray(result.content) || result.content.length === 0 || text.trim() === '') problems.push('empty answer');
  for (const pattern of INTERNALS) if (pattern.test(text)) problems.push(`leaks internals (${pattern})`);
  const outcome = (result.structuredContent as { outcome?: string } | undefined)?.outcome;
  const changed = requests.filter((request) => request.method !== 'GET');
  if (result.isError) {
    // Names what is at fault: the operation, an argument or a field.
    // Names what is at fault (the operation, an argument or a field), or the read that finds what the call should have named.
    const named = [plan.toolName, 'operationId', 'params', 'confirmationToken', 'idempotencyKey', 'quietHoursOverride', 'limit', 'offset', 'fields', 'search'];
    if (!named.some((name) => text.includes(name)) && !ALL_OPERATIONS.some((op) => text.includes(op.id)))
      problems.push('refusal names neither the operation nor a field');
    // What the model sent comes back escaped: no invisible character or bidi control in a refusal.
    if (/[\u00ad\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/.test(text)) problems.push('refusal holds an invisible character or bidi control');
    if (carried.length > 0) problems.push(`refused, yet carried out ${carried.map((entry) => entry.operationId).join(', ')}`);
  }
  if (/nothing was sent/i.test(text) && changed.length > 0)
    problems.push(`says nothing was sent, yet the sandbox saw ${changed.map((r) => `${r.method} ${r.path.slice(0, 80)}`).join(', ')}`);
  if (/Input validation error|Invalid params/.test(text) && requests.length > 0)
    problems.push(`arguments refused, yet ${requests.length} request(s) reached the API`);
  if (outcome === 'preview' || outcome === 'declined' || outcome === 'refused') {
    if (carried.length > 0) problems.push(`outcome ${outcome}, yet carried out`);
  }
  for (const entry of carried) {
    // No token in these calls is ever one the server issued: a gated write never runs.
    if (!legitToken && (policy === 'all' || risk(entry.operationId) === 'destructive')) problems.push(`${entry.operationId} ran without a yes`);
  }
  if (carried.length > 0 && !(outcome === 'done' && !result.isError)) problems.push(`carried out, but the answer is not "done" (${outcome})`);
  return problems;
}

async function observe(server: InProcess, toolName: string, args: Record<string, unknown>): Promise<Observed> {
  const json = toJson(args);
  sandbox.clearLogs();
  const result = (await server.client.callTool({ name: toolName, arguments: JSON.parse(json) })) as CallToolResult;
  return { args: json, result, text: textOf(result), requests: sandbox.requests(), carried: sandbox.carriedOut() };
}

/** A failing case, small enough to read: the seed, the tool, the arguments (long strings cut) and the answer. */
function report(seed: number, plan: Plan, observed: Observed, problems: string[]): string {
  const cut = (text: string) => (text.length > 600 ? `${text.slice(0, 600)}… (${text.length} chars)` : text);
  return `FUZZ_SEED=${seed} ${plan.toolName}: ${problems.join('; ')}\n  arguments: ${cut(observed.args.replace(/x{40,}|y{40,}/g, (run) => `<${run.length} × ${run[0]}>`))}\n  answer: ${cut(observed.text)}`;
}

describe.each(Object.values(DOMAINS).map((domain) => [domain.name, domain] as const))('%s', (name, domain) => {
  it('answers hostile arguments to both its tools truthfully, and changes nothing it refused', async () => {
    const seed = (SEED + [...name].reduce((sum, char) => sum * 31 + char.charCodeAt(0), 0)) >>> 0;
    const random = seeded(seed);
    const failures: string[] = [];
    let answered = 0;
    const tally: Record<string, number> = {};
    for (const tool of domain.tools) {
      const plan: Plan = { toolName: tool.name, operationIds: tool.operations.map((op) => op.id), kind: tool.kind };
      for (let index = 0; index < PER_TOOL; index++) {
        const policy = random.chance(0.5) ? 'all' : 'standard';
        const server = servers[name]![policy];
        // A gated write's preview first, then its token sent back with the call changed a little.
        const replay = plan.kind === 'action' && random.chance(0.2) ? await tokenReplay(random, servers[name]!.all, plan) : undefined;
        const args = replay?.args ?? hostileArguments(random, plan);
        let observed: Observed;
        try {
          observed = await observe(replay ? servers[name]!.all : server, tool.name, args);
        } catch (error) {
          failures.push(`FUZZ_SEED=${SEED} ${tool.name}: the call threw ${String(error).slice(0, 300)}\n  arguments: ${toJson(args).slice(0, 600)}`);
          continue;
        }
        answered++;
        const outcome = observed.result.isError ? 'error' : String((observed.result.structuredContent as { outcome?: string } | undefined)?.outcome ?? 'read');
        tally[outcome] = (tally[outcome] ?? 0) + 1;
        const problems = problemsOf(plan, replay ? 'all' : policy, observed, replay?.legit);
        if (problems.length > 0) failures.push(report(SEED, plan, observed, problems));
        // The server still answers.
        await server.client.ping();
      }
    }
    process.stderr.write(`${name}: ${answered} hostile calls answered (${JSON.stringify(tally)})\n`);
    if (failures.length > 0) process.stderr.write(`${failures.slice(0, 15).join('\n\n')}\n\n${failures.length} failing call(s), FUZZ_SEED=${SEED}\n`);
    expect(failures.slice(0, 5), `FUZZ_SEED=${SEED}`).toEqual([]);
    expect(answered).toBe(PER_TOOL * domain.tools.length);
    for (const server of Object.values(servers[name]!)) expect((await server.client.listTools()).tools.length).toBe(domain.tools.length);
  }, 120_000);
});
