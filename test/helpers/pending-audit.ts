// A write's audit line but for its outcome (PendingAudit), as a claim keeps it with the write's mark:
// what the Redis store's audit tests claim with and expect back.
import type { PendingAudit } from '../../shared/src/call/audit.js';

/** A `contact.delete` of record `id` by key fingerprint `key`, dated `at`. */
export const pendingAudit = (key: string, id: string, at: number): PendingAudit => ({
  time: new Date(at).toISOString(),
  key,
  server: 'engage-mcp-http',
  operationId: 'contact.delete',
  paramsDigest: `digest-${id}`,
  params: { id },
  confirmation: 'not needed',
});
