// @engage-mcp/shared: everything a domain package needs to declare its catalog, and what tests,
// docs, the build and remote mode use. A domain's stdio entry imports './runtime' instead, which
// stays lean. The rooms, bottom up: safe/ → model/ → upstream/ → call/ → mcp/ (docs/architecture.md).
export * from './model/catalog.js';
export { isPrintableAsciiKey, isUnfilledKey, loadConfig, matchesPattern, DOMAIN_NAMES, type Config, type ConfigResult } from './model/config.js';
export { InputError, UpstreamError } from './model/errors.js';
export { buildRequest } from './model/paths.js';
export { manifestOf, paramSignature, type DomainManifest } from './model/manifest.js';
export { createLogger, logSafe, redactor, type Logger } from './safe/log.js';
export { ApiClient } from './upstream/api-client.js';
export { Pacer, type PaceKeeper, type UpstreamSlots } from './upstream/pacing.js';
export { validateParams } from './call/validate.js';
export { Confirmations, MemorySpentStore, canonicalJson, issuedIdOf, keyFingerprint, type SpentStore } from './call/confirmations.js';
export { CONFIRMATION_NOT_CHECKED } from './call/outcomes.js';
export { chainAuditLine, orphanedLine, remoteAuditSecret, type AuditEntry, type AuditHead, type PendingAudit } from './call/audit.js';
export { ClaimsPaused, MemoryGuardStore, SettleOwed, type GuardStore, type IdempotencyRecord } from './call/guard-store.js';
export { KEY_LOCK_MS, KeyGuesses } from './call/key-guesses.js';
export type { Attempt } from './call/journal.js';
export { ForwardClock } from './call/forward-now.js';
export { NO_YES, WRITE_MARK_LEASE_MS } from './call/shared-mark.js';
export { createServer, SERVER_VERSION, type EngageServer, type ServerOptions } from './mcp/server.js';
export { describeTool } from './mcp/tools.js';
export { startTelemetry, telemetrySignals, type Telemetry } from './mcp/telemetry.js';
export { registerViews } from './mcp/apps.js';
