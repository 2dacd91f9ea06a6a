// What the audit command (packages/audit) needs to check a record: the chain's check, and the
// secret and chain head from the state directory the servers write. Nothing that writes.
export { REMOTE_AUDIT_KEPT_LINES, remoteAuditSecret, verifyAuditLines, type AuditHead, type AuditVerdict } from './audit.js';
export { readSecret, readState, SECRET_FILE } from './file-guard-store.js';
export { forShell } from './own-files.js';
export { homeStateDir } from '../model/config.js';
// For a person's terminal: a record's text with its controls and invisible characters escaped.
export { oneLine } from '../safe/sanitize.js';
