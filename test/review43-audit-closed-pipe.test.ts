// Review 43, the audit command read through a pipe that closes early: `engage-mcp-audit tail -n 500
// | head -1`, as a person pages or greps a record. Once the reader had gone, the next line written
// failed with EPIPE, an 'error' event nothing listened to: the command died with Node's stack trace
// (exit 1) instead of ending as a command whose reader left does. The closed pipe now ends its
// output quietly, and the exit status is the command's. Built command (`npm run build` first).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AUDIT_BIN, ticketReplyEntry } from './helpers/audit-command.js';

const root = mkdtempSync(join(tmpdir(), 'review43-audit-pipe-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('tail into a reader that stops after its first line', () => {
  it('ends without a stack trace, exit 0', { timeout: 30_000 }, async () => {
    const file = join(root, 'audit.jsonl');
    const lines = Array.from({ length: 5000 }, (_, index) => JSON.stringify({ seq: index + 1, ...ticketReplyEntry(`TCK-${index}`), prev: '', mac: 'm' }));
    writeFileSync(file, `${lines.join('\n')}\n`);
    const child = spawn(process.execPath, [AUDIT_BIN, 'tail', file, '-n', '5000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // As `head -1` does: the first line read, the pipe is closed.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once('close', (exit) => resolve(exit)));
    expect(stderr).not.toContain('EPIPE');
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
