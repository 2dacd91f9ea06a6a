// Review 32, `engage-mcp-audit tail` and hostile lines. tail turned each field into text with
// String(): a line whose seq (or any field) is an object with a "toString" field threw ("Cannot
// convert object to primitive value"), tail stopped there with exit 2, and the lines after it (the
// newest writes, what tail is for) were never shown. A field of megabytes was printed whole to the
// terminal, and params nested 200,000 deep stopped it too. Each field is now shown as its JSON where
// it is not text, cut to a few hundred characters (params to 4,000). Built command (`npm run build` first).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAudit } from './helpers/audit-command.js';

const dir = mkdtempSync(join(tmpdir(), 'review32-audit-tail-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const line = (seq: unknown, operationId: string, more: Record<string, unknown> = {}) =>
  JSON.stringify({
    seq,
    time: '2026-11-29T08:00:00.000Z',
    operationId,
    outcome: 'done',
    confirmation: 'token',
    server: 'engage-mcp-inbox',
    key: 'k',
    params: {},
    ...more,
  });

describe('tail and lines no server wrote', () => {
  it('shows every line, the newest last, each field cut short', async () => {
    const file = join(dir, 'audit.jsonl');
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const lines = [
      line(1, 'inbox.ticket.reply'),
      line({ toString: 'x' }, 'contact.create'),
      line(3, 'contact.update', { params: { notes: 'x'.repeat(1024 * 1024) } }),
      line(4, 'contact.delete').replace('"params":{}', `"params":${deep}`),
      line(5, 'campaign.send', { client: { name: { toString: 1 } } }),
    ];
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { code, stdout, stderr } = await runAudit(['tail', file, '-n', '5']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('#{"toString":"x"} 2026-11-29T08:00:00.000Z contact.create: done');
    expect(stdout).toContain('#4 2026-11-29T08:00:00.000Z contact.delete: done');
    expect(stdout).toContain('#5 2026-11-29T08:00:00.000Z campaign.send: done');
    expect(stdout.length).toBeLessThan(32 * 1024);
  });
});
