// The audit command as a person runs it (the built packages/audit: `npm run build` first), and the
// audit entry of a ticket reply the tests of the record write with the file store.
import { type ExecFileOptions, execFile } from 'node:child_process';
import { resolve } from 'node:path';
import type { AuditEntry } from '../../shared/src/call/audit.js';

export const AUDIT_BIN = resolve('packages', 'audit', 'bin', 'engage-mcp-audit.js');

/** `code`: the exit status, or the signal that stopped the command (a `timeout` given in `options`). */
export interface AuditRun {
  code: number | string;
  stdout: string;
  stderr: string;
}

/** `engage-mcp-audit ARGS`, with the output of a large record kept whole. */
export function runAudit(args: string[], options: ExecFileOptions = {}): Promise<AuditRun> {
  return new Promise((done) => {
    execFile(process.execPath, [AUDIT_BIN, ...args], { maxBuffer: 64 * 1024 * 1024, ...options, encoding: 'utf8' }, (error, stdout, stderr) =>
      done({ code: error ? (error.signal ?? Number(error.code ?? 1)) : 0, stdout, stderr }),
    );
  });
}

/** A confirmed reply to ticket `ticket` that was carried out; `extra` replaces any of its fields. */
export function ticketReplyEntry(ticket: string, extra: Partial<AuditEntry> = {}): AuditEntry {
  return {
    time: '2026-11-29T08:00:00.000Z',
    key: 'AbCdEfGh12345678',
    server: 'engage-mcp-inbox',
    operationId: 'inbox.ticket.reply',
    paramsDigest: 'd',
    params: { ticketID: ticket, message: '<text, 12 chars>' },
    confirmation: 'token',
    outcome: 'done',
    ...extra,
  };
}
