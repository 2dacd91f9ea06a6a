// Review 27d: remote mode's offers, kept per set of granted scopes (at most 256, cleared when full).
// Attacked as a tenant that could get another grant's offer: a differential check of one long-lived
// engine (its cache filled past 256 and cleared, grants interleaved, key connections, both endpoint
// kinds) against a fresh engine for every grant, on the tools, descriptions, instructions and the
// refusals (the "why" texts) for every operationId of every domain. And what a miss costs against a
// hit, printed (never asserted: CPU time is not a property of the code).
import { describe, expect, it } from 'vitest';
import { type EngageServer, type Domain, createLogger, createServer, loadConfig, manifestOf } from '@engage-mcp/shared';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { CATALOGS } from '../scripts/catalogs.js';
import { seeded } from './seeded.js';

const ALL_SCOPES = [...new Set(CATALOGS.flatMap((domain) => domain.operations.map((op) => op.scope)))].sort();
const ALL_IDS = CATALOGS.flatMap((domain) => domain.operations.map((op) => op.id));
const served = CATALOGS.flatMap((domain) =>
  manifestOf(domain).tools.flatMap((tool) => tool.operations.map((op) => ({ id: op.id, scope: op.scope, tool: tool.name, write: op.risk !== 'safe' }))),
);
const scopes = new Map(CATALOGS.flatMap((domain) => domain.operations.map((op) => [op.id, op.scope] as const)));

function engineFor(domain: Domain, env: NodeJS.ProcessEnv = {}): EngageServer {
  const config = loadConfig(
    { ENGAGE_BASE_URL: 'http://127.0.0.1:9', ...env },
    domain.name,
    domain.operations.map((op) => op.id),
    { keyPerRequest: true },
  );
  return createServer(manifestOf(domain), async () => domain, config, {
    log: createLogger('review27d', 'error', []),
    remote: { scopeOf: (id) => scopes.get(id), served },
  });
}

function authOf(grant: { id: string; scopes: string[] } | undefined, tenant: string): AuthInfo {
  return { token: `key-${tenant}`, clientId: 'c', scopes: [], ...(grant ? { extra: { grant } } : {}) } as AuthInfo;
}

/** Everything a connection is shown and told by one engine: tools, descriptions, schemas, instructions, and each operationId's refusal or acceptance. */
function seen(engine: EngageServer, authInfo: AuthInfo, together: boolean) {
  const tools: Record<string, unknown> = {};
  const fake = {
    registerTool(name: string, definition: { description: string; inputSchema: { '~standard': { validate(v: unknown): unknown } } }) {
      const answers = ALL_IDS.concat(['campaign.lst', 'contact.reed', 'nosuch.op']).map((operationId) =>
        JSON.stringify(definition.inputSchema['~standard'].validate({ operationId })),
      );
      tools[name] = { description: definition.description, answers };
    },
  };
  engine.registerTools(fake as never, { era: 'legacy', authInfo, together });
  return { tools, instructions: engine.instructionsFor(authInfo) ?? null };
}

describe('remote mode offers, cached per set of granted scopes', () => {
  it('gives every grant and key connection what a fresh engine gives it, past the clear at 256, both endpoint kinds', () => {
    const random = seeded(27_4);
    for (const [domain, env] of [
      [CATALOGS[0] as Domain, {}],
      [CATALOGS.find((d) => d.name === 'campaign') as Domain, { ENGAGE_READ_ONLY: 'true' }],
      [CATALOGS.find((d) => d.name === 'contact') as Domain, { ENGAGE_OPERATIONS_DENY: 'campaign.send,contact.list' }],
    ] as const) {
      const long = engineFor(domain, env);
      const grants: Array<{ id: string; scopes: string[] } | undefined> = [];
      for (let i = 0; i < 300; i++) {
        if (random.chance(0.1)) grants.push(undefined);
        else grants.push({ id: `g${i}`, scopes: ALL_SCOPES.filter(() => random.chance(0.5)).concat(random.chance(0.2) ? ['bogus.scope', '"],["*'] : []) });
      }
      let checked = 0;
      for (let round = 0; round < 2; round++)
        for (const [i, grant] of grants.entries()) {
          const together = random.chance(0.5);
          const auth = authOf(grant, `t${i % 7}`);
          // Fill the cache with both kinds first, so the check runs against offers built for others.
          seen(long, auth, !together);
          if (i % 10 !== 0 && round === 0) continue;
          expect(seen(long, auth, together), `grant ${JSON.stringify(grant)} together=${together}`).toEqual(seen(engineFor(domain, env), auth, together));
          checked++;
        }
      expect(checked).toBeGreaterThan(300);
    }
  });

  it('prints the CPU of a miss and a hit (registerTools on /mcp for one grant)', () => {
    const domain = CATALOGS.find((d) => d.name === 'campaign') as Domain;
    const engine = engineFor(domain);
    const fake = { registerTool() {} };
    const subsets = Array.from({ length: 1000 }, (_, i) => ({ id: `g${i}`, scopes: ALL_SCOPES.filter((_, bit) => (i >> bit) & 1 || bit > 9) }));
    const cpu = (fn: () => void) => {
      const start = process.cpuUsage();
      fn();
      const used = process.cpuUsage(start);
      return used.user + used.system;
    };
    const misses = cpu(() => {
      for (const grant of subsets) engine.registerTools(fake as never, { era: 'legacy', authInfo: authOf(grant, 't'), together: true });
    });
    const hits = cpu(() => {
      for (let i = 0; i < 1000; i++) engine.registerTools(fake as never, { era: 'legacy', authInfo: authOf(subsets[999], 't'), together: true });
    });
    process.stderr.write(
      `review27d: 1000 misses ${misses} µs CPU (${(misses / 1000).toFixed(1)} µs each), 1000 hits ${hits} µs (${(hits / 1000).toFixed(1)} µs each)\n`,
    );
    expect(misses).toBeGreaterThan(0);
  });
});
