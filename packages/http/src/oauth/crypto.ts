// The secrets of OAuth, hand-written because no library does this part: opaque prefixed tokens
// (only their hashes are stored), and the tenant key sealed with AES-256-GCM under a per-grant
// data key that is itself wrapped by each live token and by the operator's key (ENGAGE_OAUTH_KEK).
// A dump of the store alone decrypts nothing: every wrap needs a token or the KEK, neither stored.
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** Every OAuth secret we issue starts with this, so it is never mistaken for a tenant key (and is found by the key guard). */
export const TOKEN_PREFIX = 'emcp_';
export const ACCESS_PREFIX = `${TOKEN_PREFIX}at_`;
const REFRESH_PREFIX = `${TOKEN_PREFIX}rt_`;
export const CODE_PREFIX = `${TOKEN_PREFIX}ac_`;
export const SECRET_PREFIX = `${TOKEN_PREFIX}cs_`;

const KEK_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function newId(): string {
  return randomBytes(16).toString('base64url');
}

/** What the store keeps of a token, code or client secret. */
export function hashOf(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** AES-256-GCM; the result is iv, tag and ciphertext in one base64url string. `aad` binds it to its grant. */
export function seal(key: Uint8Array, plaintext: Uint8Array, aad: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The plaintext, or undefined when the key is wrong or the box was tampered with. */
export function open(key: Uint8Array, sealed: string, aad: string): Buffer | undefined {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    return undefined;
  }
}

/** The key a live token wraps its grant's data key with: derived from the token itself, which is never stored. */
export function tokenWrapKey(token: string, grantId: string): Buffer {
  return Buffer.from(hkdfSync('sha256', token, 'engage-mcp oauth token wrap', grantId, 32));
}

/** Keys derived from the KEK, one per use, so the KEK itself wraps only data keys. */
export function kekKeys(kek: Uint8Array): { wrap: Buffer; index: Buffer; consent: Buffer; refresh: Buffer } {
  return {
    wrap: Buffer.from(hkdfSync('sha256', kek, 'engage-mcp oauth', 'data key wrap', 32)),
    index: Buffer.from(hkdfSync('sha256', kek, 'engage-mcp oauth', 'key index', 32)),
    consent: Buffer.from(hkdfSync('sha256', kek, 'engage-mcp oauth', 'consent request', 32)),
    refresh: Buffer.from(hkdfSync('sha256', kek, 'engage-mcp oauth', 'refresh token', 32)),
  };
}

const GRANT_ID_BYTES = 16;
const REFRESH_BODY_BYTES = GRANT_ID_BYTES + 32 + 32;

/**
 * A refresh token names its grant and carries our MAC: one that is ours but no longer its grant's
 * current token is known to be an old one (a reuse) without a record kept per token issued, and
 * nobody can make one that names someone else's grant. Its 32 random bytes are stored nowhere.
 */
export function newRefreshToken(macKey: Uint8Array, grantId: string): string {
  const head = Buffer.concat([Buffer.from(grantId, 'base64url'), randomBytes(32)]);
  const mac = createHmac('sha256', macKey).update(head).digest();
  return `${REFRESH_PREFIX}${Buffer.concat([head, mac]).toString('base64url')}`;
}

/** The grant a refresh token of ours names, or undefined for anything we did not issue. */
export function grantOfRefreshToken(macKey: Uint8Array, token: string): string | undefined {
  if (!token.startsWith(REFRESH_PREFIX)) return undefined;
  const body = token.slice(REFRESH_PREFIX.length);
  if (!/^[\w-]{107}$/.test(body)) return undefined;
  const bytes = Buffer.from(body, 'base64url');
  if (bytes.length !== REFRESH_BODY_BYTES) return undefined;
  const head = bytes.subarray(0, GRANT_ID_BYTES + 32);
  const mac = createHmac('sha256', macKey).update(head).digest();
  if (!timingSafeEqual(mac, bytes.subarray(GRANT_ID_BYTES + 32))) return undefined;
  return head.subarray(0, GRANT_ID_BYTES).toString('base64url');
}

/** A consent request carried by its own page (sealed, so nothing is stored for a page nobody answers). */
export function sealRecord(key: Uint8Array, record: object, purpose: string): string {
  return seal(key, Buffer.from(JSON.stringify(record)), purpose);
}

export function openRecord<T>(key: Uint8Array, sealed: string, purpose: string): T | undefined {
  const bytes = sealed.length <= 16 * 1024 && /^[\w-]+$/.test(sealed) ? open(key, sealed, purpose) : undefined;
  if (!bytes) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Which grants a tenant key made, looked up without storing the key or a plain hash of it. */
export function keyIndexOf(indexKey: Uint8Array, tenantKey: string): string {
  return createHmac('sha256', indexKey).update(tenantKey).digest('base64url');
}

/** ENGAGE_OAUTH_KEK: 32 random bytes, as base64 (openssl rand -base64 32) or 64 hex digits. */
export function parseKek(raw: string): Uint8Array | undefined {
  const text = raw.trim();
  const bytes = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, /[-_]/.test(text) ? 'base64url' : 'base64');
  return bytes.length === KEK_BYTES ? new Uint8Array(bytes) : undefined;
}

/** S256 (RFC 7636): BASE64URL(SHA256(verifier)) must equal the challenge. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  return sameText(createHash('sha256').update(verifier).digest('base64url'), challenge);
}
