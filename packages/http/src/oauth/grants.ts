// Grants and their tokens. A grant is what one consent made: a client, the API scopes ticked, the
// resource (audience), and the tenant key sealed under the grant's data key. Access tokens and codes
// are stored by hash only; each live token wraps the data key, and so does the KEK (for the code
// exchange, which has no token yet). A grant's refresh tokens are one family: the grant keeps only
// its current one (hash and wrap) and its last two access tokens, so refreshing in a loop stores
// nothing more; an older refresh token, recognised by our MAC, is a reuse and ends the grant, but
// for the one just replaced, presented again once within REUSE_INTERVAL_MS (reissue).
// Revoking a grant deletes it and its family: every token of it then finds nothing.
import { randomBytes } from 'node:crypto';
import {
  ACCESS_PREFIX,
  grantOfRefreshToken,
  hashOf,
  kekKeys,
  keyIndexOf,
  newId,
  newRefreshToken,
  newSecret,
  open,
  sameText,
  seal,
  tokenWrapKey,
} from './crypto.js';
import type { OAuthStore } from './store.js';

const ACCESS_TTL_MS = 60 * 60 * 1000;
const REFRESH_TTL_MS = 30 * 24 * 60 * 60 * 1000;
export const CODE_TTL_MS = 60 * 1000;
/** A grant whose code was never exchanged is gone after this. */
const UNREDEEMED_GRANT_TTL_MS = 10 * 60 * 1000;
/** last used is written at most this often, so a busy token does not write on every request. */
const LAST_USED_EVERY_MS = 60 * 1000;
/** How long a refresh holds its token against a second, simultaneous use (until the family moves on). */
const REFRESH_CLAIM_TTL_MS = 2 * 60 * 1000;
/**
 * How long the refresh token just replaced may be presented once more (Auth0's reuse interval,
 * Okta's grace period): two processes sharing one token file refresh at once, and a client whose
 * answer was lost retries, both within moments. Measured by the store's expiry (Redis's clock).
 */
const REUSE_INTERVAL_MS = 10 * 1000;
/** How long a refresh presented while another spends the same token waits for that rotation to be written. */
const IN_FLIGHT_WAIT_MS = 3 * 1000;
const IN_FLIGHT_STEP_MS = 100;
/** Refreshes one grant may make in a minute (a client refreshes about once an hour). */
export const REFRESHES_PER_MINUTE = 30;
/** Access tokens a family keeps alive: the newest and the one before (a request may still carry it). */
const LIVE_ACCESS_TOKENS = 2;
/**
 * Grants one tenant key holds at once: a key's new grant ends its least recently used one past this,
 * so one tenant signing in over and over cannot fill the store (in-process: push out every other
 * tenant's grants and tokens), as a key's new session ends its least recently used one.
 */
export const GRANTS_PER_KEY = 1_000;

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

/** A grant's refresh state: its one current refresh token, and the access tokens still alive. */
interface Family {
  refreshHash: string;
  /** The data key under a key derived from the current refresh token. */
  refreshWrap: string;
  expiresAt: number;
  /** Hashes of the live access tokens, oldest first. */
  accessHashes: string[];
}

/** What a rotation leaves for REUSE_INTERVAL_MS, under the replaced token's hash; both under a key only that token gives. */
interface Rotation {
  grantId: string;
  /** The data key (the family's wrap before the rotation). */
  wrap: string;
  /** The refresh token the rotation gave. */
  nextSealed: string;
}

export interface CodeRecord {
  grantId: string;
  clientId: string;
  redirectUri: string;
  /** The authorization request named no redirect_uri, so the token request may leave it out (RFC 6749 §4.1.3). */
  redirectUriOmitted?: true;
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

export type RefreshOutcome = { ok: true; tokens: IssuedTokens; grant: Grant } | { ok: false; reused: boolean; otherResource?: boolean; tooMany?: boolean };

const at = (hash: string) => `at:${hash}`;
const familyKey = (grantId: string) => `family:${grantId}`;
const grantKey = (id: string) => `grant:${id}`;
const keyGrants = (index: string) => `keygrants:${index}`;
const rotationKey = (refreshHash: string) => `rtprev:${refreshHash}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Grants {
  private readonly keys: { wrap: Buffer; index: Buffer; refresh: Buffer };

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
    return this.issue(grant, dataKey);
  }

  /** New tokens for a grant; `family` is its state before (a refresh), which only a live family may replace. */
  private async issue(grant: Grant, dataKey: Buffer, family?: Family): Promise<IssuedTokens | undefined> {
    // The grant lives as long as its newest refresh token; a grant revoked meanwhile stays revoked.
    if (!(await this.store.replace(grantKey(grant.id), grant, REFRESH_TTL_MS))) return undefined;
    // So does the key's list of its grants (the connections page, revokeAllOfKey), or a grant
    // still refreshed after 30 days would drop out of it.
    await this.store.addMember(keyGrants(grant.keyIndex), grant.id, REFRESH_TTL_MS);
    if (!family) await this.endLeastUsed(grant);
    const access = newSecret(ACCESS_PREFIX);
    const refresh = newRefreshToken(this.keys.refresh, grant.id);
    const now = Date.now();
    const accessRecord = accessRecordOf(grant, access, dataKey);
    const accessHashes = [...(family?.accessHashes ?? []), hashOf(access)];
    const next: Family = {
      refreshHash: hashOf(refresh),
      refreshWrap: seal(tokenWrapKey(refresh, grant.id), dataKey, grant.id),
      expiresAt: now + REFRESH_TTL_MS,
      accessHashes: accessHashes.slice(-LIVE_ACCESS_TOKENS),
    };
    await this.store.put(at(next.accessHashes.at(-1) as string), accessRecord, ACCESS_TTL_MS);
    if (family) {
      if (!(await this.store.replace(familyKey(grant.id), next, REFRESH_TTL_MS))) {
        await this.store.delete(at(hashOf(access)));
        return undefined;
      }
    } else await this.store.put(familyKey(grant.id), next, REFRESH_TTL_MS);
    await Promise.all(accessHashes.slice(0, -LIVE_ACCESS_TOKENS).map((hash) => this.store.delete(at(hash))));
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
   * A refresh: the family's current refresh token is spent (single use, across replicas) and a new
   * pair issued. One of ours that is not the current one was used before, so it leaked: the whole
   * grant is revoked; but the one just replaced is answered once more within REUSE_INTERVAL_MS (reissue).
   */
  async refresh(token: string, clientId: string, resource?: string): Promise<RefreshOutcome> {
    const grantId = grantOfRefreshToken(this.keys.refresh, token);
    const grant = grantId === undefined ? undefined : await this.get(grantId);
    const family = grant && (await this.store.get<Family>(familyKey(grant.id)));
    // A revoked grant, or one of another client, answers the same every time.
    if (!grant || !family || grant.clientId !== clientId || family.expiresAt <= Date.now()) return { ok: false, reused: false };
    // Checked before the token is spent: a request for another resource leaves the grant as it was.
    if (resource !== undefined && resource !== grant.resource) return { ok: false, reused: false, otherResource: true };
    const hash = hashOf(token);
    const current = sameText(hash, family.refreshHash);
    // The current token's holder refreshing in a loop: each refresh leaves a claim for 2 minutes, so
    // a grant may refresh only so often (its token is not spent, and works again a minute later).
    if (current && (await this.store.count(`refreshes:${grant.id}`, 60 * 1000)) > REFRESHES_PER_MINUTE) {
      return { ok: false, reused: false, tooMany: true };
    }
    const claim = `rtused:${hash}`;
    if (!current || !(await this.store.claimOnce(claim, REFRESH_CLAIM_TTL_MS))) {
      const again = await this.reissue(grant, token, current);
      if (again) return { ok: true, tokens: again, grant };
      await this.revoke(grant.id);
      return { ok: false, reused: true };
    }
    const dataKey = open(tokenWrapKey(token, grant.id), family.refreshWrap, grant.id);
    const tokens = dataKey && (await untilIssued(this.store, claim, () => this.issue(grant, dataKey, family)));
    if (!tokens) return { ok: false, reused: false };
    // For a second presentation of `token` (reissue); the tokens are given even if this is not kept.
    const rotation: Rotation = {
      grantId: grant.id,
      wrap: family.refreshWrap,
      nextSealed: seal(tokenWrapKey(token, grant.id), Buffer.from(tokens.refresh_token), grant.id),
    };
    await this.store.put(rotationKey(hash), rotation, REUSE_INTERVAL_MS).catch(() => undefined);
    return { ok: true, tokens, grant };
  }

  /**
   * The refresh token just replaced, presented again within REUSE_INTERVAL_MS of its rotation, or
   * while another request spends it (`inFlight`: waited for): once, across replicas, a new access
   * token and the refresh token the rotation gave, while that is still the grant's current one (one
   * step back, no further). Undefined for anything else: a reuse.
   */
  private async reissue(grant: Grant, token: string, inFlight: boolean): Promise<IssuedTokens | undefined> {
    const hash = hashOf(token);
    const rotation = await this.rotationOf(hash, inFlight);
    if (!rotation || rotation.grantId !== grant.id) return undefined;
    const claim = `rtagain:${hash}`;
    if (!(await this.store.claimOnce(claim, REFRESH_CLAIM_TTL_MS))) return undefined;
    return untilIssued(this.store, claim, async () => {
      const wrapKey = tokenWrapKey(token, grant.id);
      const dataKey = open(wrapKey, rotation.wrap, grant.id);
      const refresh = open(wrapKey, rotation.nextSealed, grant.id)?.toString();
      const family = await this.store.get<Family>(familyKey(grant.id));
      if (!dataKey || !refresh || !family || !sameText(hashOf(refresh), family.refreshHash)) return undefined;
      // Outside the family's list: it is not pushed out by the next rotation, but ends with its grant (openAccess finds none).
      const access = newSecret(ACCESS_PREFIX);
      await this.store.put(at(hashOf(access)), accessRecordOf(grant, access, dataKey), ACCESS_TTL_MS);
      return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TTL_MS / 1000, refresh_token: refresh, scope: grant.scopes.join(' ') };
    });
  }

  /** What the rotation of the token hashed `hash` left; `wait`: it is being spent now, so its rotation may be written in a moment. */
  private async rotationOf(hash: string, wait: boolean): Promise<Rotation | undefined> {
    for (let waited = 0; ; waited += IN_FLIGHT_STEP_MS) {
      const rotation = await this.store.get<Rotation>(rotationKey(hash));
      if (rotation || !wait || waited >= IN_FLIGHT_WAIT_MS) return rotation;
      await sleep(IN_FLIGHT_STEP_MS);
    }
  }

  /** RFC 7009: an access or refresh token of this client ends its whole grant. Unknown tokens are not an error. */
  async revokeToken(token: string, clientId: string): Promise<void> {
    const grantId = token.startsWith(ACCESS_PREFIX)
      ? (await this.store.get<TokenRecord>(at(hashOf(token))))?.grantId
      : grantOfRefreshToken(this.keys.refresh, token);
    const grant = grantId === undefined ? undefined : await this.get(grantId);
    if (grant && grant.clientId === clientId) await this.revoke(grant.id);
  }

  async revoke(grantId: string): Promise<void> {
    const grant = await this.get(grantId);
    const family = await this.store.get<Family>(familyKey(grantId));
    await this.store.delete(grantKey(grantId));
    await this.store.delete(familyKey(grantId));
    await Promise.all((family?.accessHashes ?? []).map((hash) => this.store.delete(at(hash))));
    if (grant) await this.store.removeMember(keyGrants(grant.keyIndex), grantId);
  }

  /** Past GRANTS_PER_KEY, the key's least recently used grants end (never `kept`, the one just made). */
  private async endLeastUsed(kept: Grant): Promise<void> {
    const ids = await this.store.members(keyGrants(kept.keyIndex));
    if (ids.length <= GRANTS_PER_KEY) return;
    const grants = (await Promise.all(ids.map((id) => this.get(id)))).filter((grant): grant is Grant => grant !== undefined && grant.id !== kept.id);
    // Ids of grants already gone leave the list; then the oldest last use goes first.
    await Promise.all(
      ids.filter((id) => id !== kept.id && !grants.some((grant) => grant.id === id)).map((id) => this.store.removeMember(keyGrants(kept.keyIndex), id)),
    );
    grants.sort((a, b) => a.lastUsedAt - b.lastUsedAt);
    await Promise.all(grants.slice(0, Math.max(0, grants.length + 1 - GRANTS_PER_KEY)).map((grant) => this.revoke(grant.id)));
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

function accessRecordOf(grant: Grant, access: string, dataKey: Buffer): TokenRecord {
  return { grantId: grant.id, clientId: grant.clientId, expiresAt: Date.now() + ACCESS_TTL_MS, wrap: seal(tokenWrapKey(access, grant.id), dataKey, grant.id) };
}

/**
 * What a claimed use gives (tokens, a code), or the store's failure thrown on with the claim taken
 * back: nothing was given, the client is told "try again", and its retry is no second use.
 */
export async function untilIssued<T>(store: OAuthStore, claim: string, give: () => Promise<T>): Promise<T> {
  try {
    return await give();
  } catch (error) {
    await store.unclaim(claim).catch(() => undefined);
    throw error;
  }
}
