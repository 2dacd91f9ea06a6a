// The domains' engines, configured once for every tenant (no key: it comes with each request),
// sharing one API client, one store of spent confirmations, one secret and the paces of the keys.
import { randomBytes } from 'node:crypto';
import {
  ApiClient,
  MemorySpentStore,
  Pacer,
  UpstreamError,
  createServer,
  loadConfig,
  manifestOf,
  type Domain,
  type EngageServer,
  type GuardStore,
  type PaceKeeper,
  type SpentStore,
  type UpstreamSlots,
  type Telemetry,
} from '@engage-mcp/shared';
import { ServiceKeyGuesses } from './key-locks.js';
import { ServiceMemoryGuardStore } from './memory-guard-store.js';
import type { ServiceMetrics } from './metrics.js';
import { requestLogOf, type JsonLog } from './log.js';

/** Problems that keep the service from starting (bad settings): never served as answers. */
export class StartupError extends Error {}

/** How many keys' paces are remembered (by fingerprint); the oldest is forgotten first. */
const MAX_PACES = 10_000;

export interface EngineOptions {
  env: NodeJS.ProcessEnv;
  catalogs: Domain[];
  spent?: SpentStore;
  secret?: Uint8Array;
  pace?: (keyFingerprint: string) => PaceKeeper;
  /** Each key's upstream slots (fairness.ts). */
  slots?: (keyFingerprint: string) => UpstreamSlots;
  /** Has the API accepted this key (fairness.ts)? Only such keys' locks share the room of every tenant's (key-locks.ts). */
  isAccepted?: (keyFingerprint: string) => boolean;
  /**
   * Charged just before a confirmation is spent (`token:<nonce>` or `state:<nonce>`, as the core's
   * confirmations.ts names it): may refuse it (throws: nothing spent); returns how to give the
   * charge back when the value was not spent after all (spent before, or the store refused it).
   */
  chargeSpend?: (id: string) => () => void;
  /** Told when the API answers 401 for a request's key (OAuth ends the grants made with it). */
  onKeyRefused?: (apiKey: string) => void;
  /** The guardrails' counters, idempotency records and audit record: Redis for several replicas, else this process's memory. */
  guardStore?: GuardStore;
  telemetry?: Telemetry;
}

export interface Engines {
  engines: EngageServer[];
  client: ApiClient;
}

export function startEngines(options: EngineOptions, metrics: ServiceMetrics, log: JsonLog): Engines {
  const configs = options.catalogs.map((domain) => ({
    domain,
    result: loadConfig(
      options.env,
      domain.name,
      domain.operations.map((op) => op.id),
      { keyPerRequest: true },
    ),
  }));
  const problems = [...new Set(configs.flatMap(({ result }) => (result.ok ? [] : result.problems)))];
  if (problems.length > 0) throw new StartupError(problems.join(' '));
  const first = configs[0]?.result;
  if (!first?.ok) throw new StartupError('no domains to serve');
  const client = new ApiClient(first.config, log);
  if (options.onKeyRefused) tellKeyRefused(client, options.onKeyRefused);
  const spent = countedSpentStore(options.spent ?? new MemorySpentStore(), metrics, options.chargeSpend);
  const paceOf = pacesOfKeys(options.pace);
  const onCall = ({ domain, ok, ms }: { domain: string; ok: boolean; ms: number }) => {
    metrics.calls.inc({ domain, outcome: ok ? 'ok' : 'error' });
    metrics.callLatency.observe({ domain }, ms / 1000);
  };
  // One secret for every domain (and, with Redis, every replica). A token may outlive this process
  // only where the record that it was spent does too: with spent tokens kept in this process's
  // memory, a secret that survives a restart would honour a spent token again, so it is random then.
  const secret = options.spent ? (options.secret ?? randomBytes(32)) : randomBytes(32);
  // One store for every domain: a daily cap counts a key's messages whichever domain sends them.
  const guards = options.guardStore ?? new ServiceMemoryGuardStore();
  const guardStore = () => guards;
  // A key locked by one domain's call is locked for every domain (key-guesses.ts).
  const keyGuesses = new ServiceKeyGuesses(options.isAccepted ?? (() => true), undefined, log);
  // What an answer names may be another domain's read: an OAuth grant may lack its scope (shared/src/model/references.ts).
  const scopes = new Map(options.catalogs.flatMap((domain) => domain.operations.map((op) => [op.id, op.scope] as const)));
  // On /mcp every domain shares one server: a tool given another domain's operationId names the tool it belongs to.
  const manifests = new Map(options.catalogs.map((domain) => [domain.name, manifestOf(domain)] as const));
  const served = [...manifests.values()].flatMap((manifest) =>
    manifest.tools.flatMap((tool) => tool.operations.map((op) => ({ id: op.id, scope: op.scope, tool: tool.name, write: op.risk !== 'safe' }))),
  );
  const engines = configs.map(({ domain, result }) =>
    createServer(manifests.get(domain.name) ?? manifestOf(domain), async () => domain, result, {
      ...(options.telemetry ? { telemetry: options.telemetry } : {}),
      log,
      spent,
      secret,
      remote: {
        pace: paceOf,
        ...(options.slots ? { slots: options.slots } : {}),
        logOf: (authInfo) => requestLogOf(log, authInfo),
        scopeOf: (operationId) => scopes.get(operationId),
        served,
      },
      client,
      onCall,
      guardStore,
      keyGuesses,
    }),
  );
  return { engines, client };
}

/** Every request of the shared client, watched for the API's 401 on a request's own key. */
function tellKeyRefused(client: ApiClient, onKeyRefused: (apiKey: string) => void): void {
  const request = client.request.bind(client);
  client.request = async (req, ctx = {}) => {
    try {
      return await request(req, ctx);
    } catch (error) {
      if (error instanceof UpstreamError && error.kind === 'auth' && ctx.credentials) onKeyRefused(ctx.credentials.apiKey);
      throw error;
    }
  };
}

/** The store, counted in the metrics; each value spent is charged first (`chargeSpend`), and given back unless it was spent now. */
function countedSpentStore(store: SpentStore, metrics: ServiceMetrics, chargeSpend?: (id: string) => () => void): SpentStore {
  return {
    async consume(nonce, expiresAt) {
      // Charged before the store is asked, so concurrent spends of one key see each other's charges.
      const giveBack = chargeSpend?.(nonce);
      let firstUse = false;
      try {
        firstUse = await store.consume(nonce, expiresAt);
      } finally {
        if (!firstUse) giveBack?.();
      }
      metrics.confirmations.inc({ outcome: firstUse ? 'redeemed' : 'replayed' });
      return firstUse;
    },
  };
}

/** The pace of each key by fingerprint, least recently used forgotten first. */
function pacesOfKeys(make: ((keyFingerprint: string) => PaceKeeper) | undefined): (keyFingerprint: string) => PaceKeeper {
  const paces = new Map<string, PaceKeeper>();
  return (id) => {
    let pace = paces.get(id);
    if (pace) paces.delete(id);
    else if (paces.size >= MAX_PACES) paces.delete(paces.keys().next().value as string);
    pace ??= make?.(id) ?? new Pacer();
    paces.set(id, pace);
    return pace;
  };
}
