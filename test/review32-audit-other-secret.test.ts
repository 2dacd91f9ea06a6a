// Review 32, verify against the wrong secret. A record checked with another secret (another state
// directory's audit.key, a --state-dir that is not the servers', an audit.key restored from the
// wrong backup, a wrong ENGAGE_STATE_SECRET with --remote) fails every line's mac, and verify said
// "line 1: its content was changed (the mac does not match). The record was changed from that line
// on.": a false finding of tampering, in the one place that is trusted to say so. A line is now
// named as changed once any line's mac matches (the secret is right); when none does, verify says
// that the record was chained with another secret or every line was changed (exit 1).
// Built command (`npm run build` first).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { runAudit, ticketReplyEntry } from './helpers/audit-command.js';

const root = mkdtempSync(join(tmpdir(), 'review32-audit-secret-'));
const servers = join(root, 'servers');
const other = join(root, 'other');
const record = join(servers, 'audit.jsonl');

const entry = (ticket: string) => ticketReplyEntry(ticket, { params: { ticketID: ticket, message: '<text, 4 chars>' } });

beforeAll(async () => {
  const store = new FileGuardStore(servers);
  for (const ticket of ['TCK-1', 'TCK-2', 'TCK-3']) await store.appendAudit(entry(ticket));
  // Another state directory, with a secret of its own.
  await new FileGuardStore(other).appendAudit(entry('TCK-9'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const verify = (file: string, stateDir: string) => runAudit(['verify', file, '--state-dir', stateDir]);

describe('verify with a secret the record was not chained with', () => {
  it('says so, and does not name a line as changed', async () => {
    const { code, stdout } = await verify(record, other);
    expect(stdout).not.toContain('its content was changed');
    expect(stdout).toContain("no line's mac matches: the record was chained with another secret");
    expect(code).toBe(1);
  });

  it('with the right secret, an edited first line is still named as changed', async () => {
    const lines = readFileSync(record, 'utf8').trimEnd().split('\n');
    const edited = join(root, 'edited.jsonl');
    writeFileSync(edited, `${[(lines[0] as string).replace('TCK-1', 'TCK-7'), ...lines.slice(1)].join('\n')}\n`);
    const { code, stdout } = await verify(edited, servers);
    expect(stdout).toContain('line 1: its content was changed (the mac does not match). The record was changed from that line on.');
    expect(code).toBe(1);
  });
});
