// Review 32, `engage-mcp-audit verify --state-dir` with no folder after it (or an empty one: a
// script's `--state-dir "$STATE"` with STATE unset). The command resolved the missing value to ''
// and so to the working folder, and checked whatever record and secret lay there, answering "the
// chain is intact" about a record nobody named. A missing or empty --state-dir is now refused
// (exit 2) with the usage. Built command (`npm run build` first).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { runAudit, ticketReplyEntry } from './helpers/audit-command.js';

const here = mkdtempSync(join(tmpdir(), 'review32-audit-cwd-'));

beforeAll(async () => {
  // A state directory that is also the working folder of the command.
  await new FileGuardStore(here).appendAudit(ticketReplyEntry('TCK-1'));
});
afterAll(() => rmSync(here, { recursive: true, force: true }));

describe('verify --state-dir with no folder given', () => {
  it.each([[['verify', '--state-dir']], [['verify', '--state-dir', '']], [['verify', '--state-dir', '--remote', 'audit.jsonl']]])(
    '%j is refused, not taken for the working folder',
    async (args) => {
      const { code, stdout } = await runAudit(args, { cwd: here, env: { PATH: process.env.PATH ?? '', HOME: here } });
      expect(stdout).not.toContain('the chain is intact');
      expect(stdout).toContain('--state-dir needs a folder');
      expect(code).toBe(2);
    },
  );
});
