// Grants and their tokens. A grant is what one consent made: a client, the API scopes ticked, the
// resource (audience), and the tenant key sealed under the grant's data key. Access and refresh
// tokens, and codes, are stored by hash only; each live token wraps the data key, and so does the
// KEK (for the code exchange, which has no token yet). Revoking a grant deletes it: every token of
// it then finds nothing.
import { randomBytes } from 'node:crypto';
import { ACCESS_PREFIX, REFRESH_PREFIX, hashOf, kekKeys, keyIndexOf, newId, newSecret, open, seal, tokenWrapKey } from './crypto.js';
import type { OAuthStore } from './store.js';

export const ACCESS_TTL_MS = 60 * 60 * 1000;
export const REFRESH_TTL_MS = 30 * 24 * 60 * 60 * 1000;
export const CODE_TTL_MS = 60 * 1000;
/** A grant whose code was never exchanged is gone after this. */
const UNREDEEMED_GRANT_TTL_MS = 10 * 60 * 1000;
/** last used is written at most this often, so a busy token does not write on every request. */
const LAST_USED_EVERY_MS = 60 * 1000;

export interface Grant {
  id: string;
  clientId: string;
  clientName: string;
  scopes: string[];
  resource: string;
  createdAt: number;
  lastUsedAt: number;
  keyIndex: string;
  /** The tenant key under the data key. */
  sealedKey: string;
  /** The data key under the KEK. */
  kekWrap: string;
}

interface TokenRecord {
  grantId: string;
  clientId: string;
  expiresAt: number;
  /** The data key under a key derived from this token. */
  wrap: string;
}

export interface CodeRecord {
  grantId: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
}

export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** What a verified access token opens: its grant and the tenant key, for this request only. */
export interface Opened {
  grant: Grant;
  tenantKey: string;
  expiresAt: number;
}

export type RefreshOutcome = { ok: true; tokens: IssuedTokens; grant: Grant } | { ok: false; reused: boolean; otherResource?: boolean };

const at = (hash: string) => `at:${hash}`;
const rt = (hash: string) => `rt:${hash}`;
const grantKey = (id: string) => `grant:${id}`;
const keyGrants = (index: string) => `keygrants:${index}`;

export class Grants {
  private readonly keys: { wrap: Buffer; index: Buffer };

  constructor(
    private readonly store: OAuthStore,
    kek: Uint8Array,
  ) {
    this.keys = kekKeys(kek);
  }

  keyIndex(tenantKey: string): string {
    return keyIndexOf(this.keys.index, tenantKey);
  }

  /** A consent: the grant with its sealed key, alive until its code is exchanged (or for 10 minutes). */
  async create(input: { clientId: string; clientName: string; scopes: string[]; resource: string; tenantKey: string }): Promise<Grant> {
    const id = newId();
    const dataKey = randomBytes(32);
    const now = Date.now();
    const grant: Grant = {
      id,
      clientId: input.clientId,
      clientName: input.clientName,
      scopes: input.scopes,
      resource: input.resource,
      createdAt: now,
      lastUsedAt: now,
      keyIndex: this.keyIndex(input.tenantKey),
      sealedKey: seal(dataKey, Buffer.from(input.tenantKey), id),
      kekWrap: seal(this.keys.wrap, dataKey, id),
    };
    await this.store.put(grantKey(id), grant, UNREDEEMED_GRANT_TTL_MS);
    return grant;
  }

  async get(id: string): Promise<Grant | undefined> {
    return this.store.get<Grant>(grantKey(id));
  }

  /** The code exchange: the KEK opens the data key; the new tokens wrap it; the grant lives as long as its refresh token. */
  async issueFirst(grant: Grant): Promise<IssuedTokens | undefined> {
    const dataKey = open(this.keys.wrap, grant.kekWrap, grant.id);
    if (!dataKey) return undefined;
    await this.store.addMember(keyGrants(grant.keyIndex), grant.id, REFRESH_TTL_MS);
    return this.issue(grant, dataKey);
  }

  private async issue(grant: Grant, dataKey: Buffer): Promise<IssuedTokens | undefined> {
    // The grant lives as long as its newest refresh token; a grant revoked meanwhile stays revoked.
    if (!(await this.store.replace(grantKey(grant.id), grant, REFRESH_TTL_MS))) return undefined;
    const access = newSecret(ACCESS_PREFIX);
    const refresh = newSecret(REFRESH_PREFIX);
    const now = Date.now();
    const record = (token: string, ttl: number): TokenRecord => ({
      grantId: grant.id,
      clientId: grant.clientId,
      expiresAt: now + ttl,
      wrap: seal(tokenWrapKey(token, grant.id), dataKey, grant.id),
    });
    await this.store.put(at(hashOf(access)), record(access, ACCESS_TTL_MS), ACCESS_TTL_MS);
    await this.store.put(rt(hashOf(refresh)), record(refresh, REFRESH_TTL_MS), REFRESH_TTL_MS);
    return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TTL_MS / 1000, refresh_token: refresh, scope: grant.scopes.join(' ') };
  }

  /** An access token: its grant, and the tenant key it alone can open. Undefined for anything unknown, expired or revoked. */
  async openAccess(token: string): Promise<Opened | undefined> {
    if (!token.startsWith(ACCESS_PREFIX)) return undefined;
    const record = await this.store.get<TokenRecord>(at(hashOf(token)));
    if (!record || record.expiresAt <= Date.now()) return undefined;
    const grant = await this.get(record.grantId);
    if (!grant) return undefined;
    const dataKey = open(tokenWrapKey(token, grant.id), record.wrap, grant.id);
    const tenantKey = dataKey && open(dataKey, grant.sealedKey, grant.id);
    if (!tenantKey) return undefined;
    if (Date.now() - grant.lastUsedAt > LAST_USED_EVERY_MS) {
      grant.lastUsedAt = Date.now();
      // Only over the live grant: one revoked since it was read stays revoked (and this token with it).
      if (!(await this.store.replace(grantKey(grant.id), grant, REFRESH_TTL_MS))) return undefined;
    }
    return { grant, tenantKey: tenantKey.toString(), expiresAt: record.expiresAt };
  }

  /**
   * A refresh: the refresh token is spent (single use, across replicas) and a new pair issued.
   * A refresh token presented a second time means it leaked: the whole grant is revoked.
   */
  async refresh(token: string, clientId: string, resource?: string): Promise<RefreshOutcome> {
    if (!token.startsWith(REFRESH_PREFIX)) return { ok: false, reused: false };
    const hash = hashOf(token);
    const record = await this.store.get<TokenRecord>(rt(hash));
    if (!record || record.expiresAt <= Date.now() || record.clientId !== clientId) return { ok: false, reused: false };
    // A revoked grant answers the same every time; only a live one spends the token.
    const grant = await this.get(record.grantId);
    if (!grant) return { ok: false, reused: false };
    // Checked before the token is spent: a request for another resource leaves the grant as it was.
    if (resource !== undefined && resource !== grant.resource) return { ok: false, reused: false, otherResource: true };
    if (!(await this.store.claimOnce(`rtused:${hash}`, REFRESH_TTL_MS))) {
      await this.revoke(record.grantId);
      return { ok: false, reused: true };
    }
    const dataKey = open(tokenWrapKey(token, grant.id), record.wrap, grant.id);
    const tokens = dataKey && (await this.issue(grant, dataKey));
    if (!tokens) return { ok: false, reused: false };
    return { ok: true, tokens, grant };
  }

  /** RFC 7009: an access or refresh token of this client ends its whole grant. Unknown tokens are not an error. */
  async revokeToken(token: string, clientId: string): Promise<void> {
    const key = token.startsWith(ACCESS_PREFIX) ? at(hashOf(token)) : token.startsWith(REFRESH_PREFIX) ? rt(hashOf(token)) : undefined;
    const record = key ? await this.store.get<TokenRecord>(key) : undefined;
    if (record && record.clientId === clientId) await this.revoke(record.grantId);
  }

  async revoke(grantId: string): Promise<void> {
    const grant = await this.get(grantId);
    await this.store.delete(grantKey(grantId));
    if (grant) await this.store.removeMember(keyGrants(grant.keyIndex), grantId);
  }

  /** The grants a tenant key made (the connections page). */
  async ofKey(tenantKey: string): Promise<Grant[]> {
    const index = this.keyIndex(tenantKey);
    const ids = await this.store.members(keyGrants(index));
    const grants = await Promise.all(ids.map((id) => this.get(id)));
    return grants.filter((grant): grant is Grant => grant !== undefined && grant.keyIndex === index);
  }

  /** The API refused the key (401): every grant made with it ends. */
  async revokeAllOfKey(tenantKey: string): Promise<number> {
    const grants = await this.ofKey(tenantKey);
    await Promise.all(grants.map((grant) => this.revoke(grant.id)));
    return grants.length;
  }
}
