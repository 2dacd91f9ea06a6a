// OAuth clients, two ways: Dynamic Client Registration (RFC 7591; rate-limited, expiring) and
// Client ID Metadata Documents (the client_id is an https URL whose document we fetch, with the
// SSRF limits: https only, no loopback or private address, a size and a time limit, cached).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { SECRET_PREFIX, hashOf, newId, newSecret, sameText } from './crypto.js';
import { siteOf } from './requester.js';
import type { OAuthStore } from './store.js';

export interface Client {
  clientId: string;
  clientName: string;
  redirectUris: string[];
  /** 'none' for public clients; else the hash of the secret we issued. */
  authMethod: 'none' | 'client_secret_post' | 'client_secret_basic';
  secretHash?: string;
  /** From a metadata document (its URL is the client_id). */
  cimd: boolean;
  /** When it was registered (ms), so it keeps its lifetime when a sign-in confirms it; missing in a record an earlier version wrote. */
  registeredAt?: number;
}

/** A registration's life from when it was made, once a person has signed in with it. */
const REGISTRATION_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** Until then: anyone may register, and what nobody uses does not stay. */
const UNUSED_REGISTRATION_TTL_MS = 24 * 60 * 60 * 1000;
const REGISTRATIONS_PER_HOUR = 20;
/** For an IPv6 /48 (65,536 /64s, each with REGISTRATIONS_PER_HOUR): what a site could need, not what its addresses could make. */
const REGISTRATIONS_PER_HOUR_PER_SITE = 200;
const HOUR_MS = 60 * 60 * 1000;
/** Client metadata documents fetched at once, across every caller, and for one requester. */
const MAX_CIMD_FETCHES = 8;
const MAX_CIMD_FETCHES_PER_REQUESTER = 2;
const CIMD_MAX_BYTES = 5 * 1024;
const CIMD_TIMEOUT_MS = 5_000;
const CIMD_CACHE_MS = 60 * 60 * 1000;

/** Test seams, set in code only (never from the environment): tests serve the document from loopback with their own CA. */
export interface CimdSeams {
  allowPrivateAddresses?: boolean;
  ca?: string | Buffer;
}

export class ClientProblem extends Error {
  constructor(
    message: string,
    /** The RFC 7591 error code a registration answers with. */
    readonly code = 'invalid_client_metadata',
    /** What the network said, for our log only: never shown to whoever named the URL. */
    readonly detail?: string,
    /** When trying again may succeed (seconds): a limit's, for Retry-After. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** Redirect URIs we accept: https, http only to a loopback host (native apps), or an app's private-use scheme (cursor://, vscode://). */
export function redirectUriProblem(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || uri.length > 2000) return 'a redirect URI must be a string of at most 2000 characters';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${uri} is not a URL`;
  }
  if (url.hash) return `${uri} has a fragment`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') return isLoopbackHost(url.hostname) ? undefined : `${uri}: http is allowed only to localhost`;
  if (['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:', 'ftp:', 'ws:', 'wss:'].includes(url.protocol)) return `${uri}: scheme not allowed`;
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? undefined : `${uri}: scheme not allowed`;
}

/**
 * Whether `given` is one of the redirect URIs a client registered: the same text, or (RFC 8252
 * §7.3, a native app takes the port the system gives it at each sign-in) a loopback http URI that
 * differs from one registered only by its port. `given` must then be written as the parser writes
 * it, with no user or fragment, so the host, path and query compared are those the browser goes to.
 */
export function isRegisteredRedirect(registered: string[], given: string): boolean {
  if (registered.includes(given)) return true;
  const url = URL.canParse(given) ? new URL(given) : undefined;
  if (!url || url.href !== given || url.username || url.password || url.hash) return false;
  const wanted = loopbackWithoutPort(url);
  return wanted !== undefined && registered.some((each) => URL.canParse(each) && loopbackWithoutPort(new URL(each)) === wanted);
}

/** A loopback http URI with its port taken out; undefined for any other. */
function loopbackWithoutPort(url: URL): string | undefined {
  if (url.protocol !== 'http:' || !isLoopbackHost(url.hostname)) return undefined;
  url.port = '';
  return url.href;
}

export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || hostname === '::1' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

const DCR_METHODS = ['none', 'client_secret_post', 'client_secret_basic'] as const;

export class Clients {
  private readonly cimdCache = new Map<string, { client: Client; until: number }>();
  private readonly fetching = new Map<string, Promise<Client>>();
  private readonly fetchingFor = new Map<string, number>();

  constructor(
    private readonly store: OAuthStore,
    private readonly seams: CimdSeams = {},
    /** Where the service's log hears of registrations pushed out (info). */
    private readonly log?: (line: string) => void,
  ) {}

  /** RFC 7591: validates the metadata and answers the registration (with a secret only if one was asked for). */
  async register(body: unknown, requester: string): Promise<Record<string, unknown>> {
    const metadata = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const site = siteOf(requester);
    if (
      (await this.store.count(`dcr:${requester}`, HOUR_MS)) > REGISTRATIONS_PER_HOUR ||
      (site !== undefined && (await this.store.count(`dcr:${site}`, HOUR_MS)) > REGISTRATIONS_PER_HOUR_PER_SITE)
    ) {
      throw new ClientProblem('too many registrations from your network; try later', 'temporarily_unavailable', undefined, HOUR_MS / 1000);
    }
    const client: Client = { ...clientFrom(metadata, newId(), false), registeredAt: Date.now() };
    let secret: string | undefined;
    if (client.authMethod !== 'none') {
      secret = newSecret(SECRET_PREFIX);
      client.secretHash = hashOf(secret);
    }
    // Anyone may register: until a sign-in uses it (confirm), it lives a day, among a bounded number
    // of such (on Redis too, where nothing else bounds them; past it the oldest goes), and a full
    // in-process store drops it first.
    const pushedOut = await this.store.putDisposable(`client:${client.clientId}`, client, UNUSED_REGISTRATION_TTL_MS);
    if (pushedOut > 0) this.log?.(`oauth: the service holds its most registrations nobody has signed in with; the oldest ${pushedOut} made way`);
    const issuedAt = Math.floor(Date.now() / 1000);
    return {
      client_id: client.clientId,
      ...(secret ? { client_secret: secret, client_secret_expires_at: issuedAt + REGISTRATION_TTL_MS / 1000 } : {}),
      client_id_issued_at: issuedAt,
      client_name: client.clientName,
      redirect_uris: client.redirectUris,
      token_endpoint_auth_method: client.authMethod,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }

  /** The client a client_id names: a registration, or (an https URL) its metadata document; `requester` (requester.ts) is who asks. */
  async find(clientId: string, requester?: string): Promise<Client | undefined> {
    if (clientId.startsWith('https://')) return this.fromDocument(clientId, requester);
    if (!/^[\w-]{1,64}$/.test(clientId)) return undefined;
    return this.store.get<Client>(`client:${clientId}`);
  }

  /**
   * A registration a person signed in with (a consent given with a key the API accepted): no longer
   * disposable (store.ts), so registrations made by anyone never push it out nor count against it,
   * and it lives 30 days from when it was made (a day until now).
   */
  async confirm(clientId: string): Promise<void> {
    if (!/^[\w-]{1,64}$/.test(clientId)) return; // a metadata document's URL: nothing stored
    const client = await this.store.get<Client>(`client:${clientId}`);
    if (!client) return;
    const left = (client.registeredAt ?? Date.now()) + REGISTRATION_TTL_MS - Date.now();
    if (left > 0) await this.store.keep(`client:${clientId}`, client, left);
  }

  /** Token and revocation endpoints: the client, if its authentication (none, or its secret) holds. */
  async authenticate(clientId: string | undefined, secret: string | undefined, requester?: string): Promise<Client | undefined> {
    // Our own capacity (too many metadata documents being fetched) and our store not answering are
    // no failed authentication: they are thrown on, to be answered as "try again", so a client does
    // not drop its credentials. Only a client the metadata document refuses is none.
    const client = clientId
      ? await this.find(clientId, requester).catch((error: unknown) => {
          if (!(error instanceof ClientProblem) || error.code === 'temporarily_unavailable') throw error;
          return undefined;
        })
      : undefined;
    if (!client) return undefined;
    if (client.authMethod === 'none') return client;
    return secret !== undefined && client.secretHash !== undefined && sameText(hashOf(secret), client.secretHash) ? client : undefined;
  }

  private async fromDocument(url: string, requester = ''): Promise<Client> {
    const cached = this.cimdCache.get(url);
    if (cached && cached.until > Date.now()) return cached.client;
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (!parsed || url.length > 2000 || parsed.protocol !== 'https:' || parsed.pathname === '/' || parsed.hash || parsed.username || parsed.password) {
      throw new ClientProblem('a client_id URL must be https, at most 2000 characters, with a path, and no fragment or credentials');
    }
    // What is fetched is what the pages show: the parser drops tabs, resolves dot segments (which
    // the CIMD draft forbids) and encodes what a URL may not hold (a right-to-left override).
    if (parsed.href !== url || url.includes('#')) {
      throw new ClientProblem(`a client_id URL must be written in its normal form (${parsed.href.replace(/#.*$/, '')}), with no dot segments`);
    }
    // Anyone can name a client_id URL: identical fetches share one, and only a few run at once, so
    // the service cannot be made to send a flood of GETs to someone else's server; and one
    // requester holds at most two of them, so it cannot keep everyone else's sign-ins refused.
    const inFlight = this.fetching.get(url);
    if (inFlight) return inFlight;
    const mine = this.fetchingFor.get(requester) ?? 0;
    if (this.fetching.size >= MAX_CIMD_FETCHES || mine >= MAX_CIMD_FETCHES_PER_REQUESTER) {
      throw new ClientProblem('too many client metadata documents are being fetched right now; try again in a moment', 'temporarily_unavailable');
    }
    this.fetchingFor.set(requester, mine + 1);
    const fetched = this.clientFromDocument(url, parsed).finally(() => {
      this.fetching.delete(url);
      const left = (this.fetchingFor.get(requester) ?? 1) - 1;
      if (left > 0) this.fetchingFor.set(requester, left);
      else this.fetchingFor.delete(requester);
    });
    this.fetching.set(url, fetched);
    return fetched;
  }

  private async clientFromDocument(url: string, parsed: URL): Promise<Client> {
    const document = await fetchDocument(parsed, this.seams);
    if (document.client_id !== url) throw new ClientProblem('the client metadata document names another client_id');
    if (document.client_secret !== undefined || (document.token_endpoint_auth_method ?? 'none') !== 'none') {
      throw new ClientProblem('a client metadata document client authenticates with "none" only');
    }
    const client = clientFrom(document, url, true);
    if (this.cimdCache.size >= 1000) this.cimdCache.delete(this.cimdCache.keys().next().value as string);
    this.cimdCache.set(url, { client, until: Date.now() + CIMD_CACHE_MS });
    return client;
  }
}

function clientFrom(metadata: Record<string, unknown>, clientId: string, cimd: boolean): Client {
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10) throw new ClientProblem('redirect_uris must list 1 to 10 URIs', 'invalid_redirect_uri');
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new ClientProblem(problem, 'invalid_redirect_uri');
  }
  const method = metadata.token_endpoint_auth_method ?? 'none';
  if (!DCR_METHODS.includes(method as (typeof DCR_METHODS)[number])) throw new ClientProblem(`token_endpoint_auth_method ${String(method)} is not supported`);
  const grantTypes = metadata.grant_types;
  if (grantTypes !== undefined && (!Array.isArray(grantTypes) || !grantTypes.includes('authorization_code'))) {
    throw new ClientProblem('grant_types must include authorization_code');
  }
  // Shown on the consent page: no control, invisible or direction-changing characters (a name that reads as another).
  const given = typeof metadata.client_name === 'string' ? metadata.client_name.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, '').trim() : '';
  const name = given !== '' ? Array.from(given).slice(0, 100).join('') : undefined;
  return {
    clientId,
    clientName: name ?? (cimd ? new URL(clientId).hostname : 'an unnamed client'),
    redirectUris: uris as string[],
    authMethod: method as Client['authMethod'],
    cimd,
  };
}

/**
 * Why a document could not be fetched, in one sentence whatever the network said: a name that does
 * not resolve, one that resolves to a private address, a port refused, a service there that speaks
 * no TLS, a certificate naming other hosts each had its own words (the socket's error, with the
 * address and the certificate's names), so anyone could map hosts and ports through our address.
 */
const UNREACHABLE = 'the client metadata document could not be fetched: its host must answer over https at a public address (not a private or loopback one)';

// Addresses a metadata fetch must never reach: the special-use ones (RFC 6890, as the CIMD draft
// asks): loopback, private, link-local, carrier-grade NAT, documentation, multicast, reserved, and
// the IPv6 ranges that carry an IPv4 address to a translator or tunnel (IPv4-compatible and
// -translated, NAT64 well-known and local-use, 6to4, Teredo), through which a private IPv4 address
// is reached under an IPv6 one.
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

function isBlockedAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return BLOCKED.check(mapped, 'ipv4');
  const family = isIP(address);
  return family === 0 || BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Resolves the host and refuses it if any address is blocked; the connection then goes to the address checked (no rebinding). */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 4);
      const blocked = addresses.find((each) => isBlockedAddress(each.address));
      if (blocked && !allowPrivate) return callback(new ClientProblem(UNREACHABLE, undefined, `${hostname} resolves to ${blocked.address}`), '', 4);
      const first = addresses[0] as LookupAddress;
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, first.address, first.family);
    });
  };
}

function fetchDocument(url: URL, seams: CimdSeams): Promise<Record<string, unknown>> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && isBlockedAddress(host) && !seams.allowPrivateAddresses) {
    return Promise.reject(new ClientProblem('the client metadata URL points at a private or loopback address'));
  }
  let req: ClientRequest | undefined;
  let deadline: NodeJS.Timeout | undefined;
  // 5 s for the whole document, not between bytes (the socket's own timeout): a server that
  // trickles its body, or drops the connection after the headers, does not hold the request open.
  const late = new Promise<never>((_, reject) => {
    deadline = setTimeout(() => {
      reject(new ClientProblem('the client metadata document did not arrive in time'));
      req?.destroy();
    }, CIMD_TIMEOUT_MS);
  });
  const fetched = new Promise<Record<string, unknown>>((resolve, reject) => {
    const options = { lookup: guardedLookup(seams.allowPrivateAddresses === true), timeout: CIMD_TIMEOUT_MS, headers: { accept: 'application/json' } };
    req = httpsRequest(url, { ...options, ...(seams.ca ? { ca: seams.ca } : {}) }, (res) => {
      const cutOff = () => reject(new ClientProblem('the client metadata document was cut off'));
      res.on('error', cutOff);
      res.on('aborted', cutOff);
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new ClientProblem(`the client metadata document answered ${res.statusCode}`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > CIMD_MAX_BYTES) {
          req?.destroy();
          reject(new ClientProblem(`the client metadata document is larger than ${CIMD_MAX_BYTES} bytes`));
        } else chunks.push(chunk);
      });
      res.on('end', () => {
        if (!res.complete) return cutOff();
        try {
          const document = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
          if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new Error('not an object');
          resolve(document as Record<string, unknown>);
        } catch {
          reject(new ClientProblem('the client metadata document is not a JSON object'));
        }
      });
    });
    req.on('timeout', () => req?.destroy(new ClientProblem('the client metadata document did not arrive in time')));
    req.on('error', (error) => reject(error instanceof ClientProblem ? error : new ClientProblem(UNREACHABLE, undefined, error.message)));
    req.end();
  });
  return Promise.race([fetched, late]).finally(() => clearTimeout(deadline));
}
