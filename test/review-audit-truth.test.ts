// Review finding: the audit record says a write was "done" when the call sent nothing.
// What must hold: the audit record has one "done" line per write the API carried out. A call that
// sent nothing (a spent confirmationToken presented again, a write refused as still running) must
// not be recorded as "done" (nor "unknown"), and above all not as a gated operation "done" with
// confirmation "not needed", which reads as a destructive write that ran without anyone's yes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { MemoryGuardStore } from '../shared/src/call/guard-store.js';
import { DOMAINS, countCarriedOut, inProcess, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe('review: the audit record tells the truth about replays', () => {
  it('a spent token presented again adds no "done" line, and never "done" with confirmation "not needed"', async () => {
    const store = new MemoryGuardStore();
    const server = await inProcess(DOMAINS.inbox!, sandbox, { server: { guardStore: () => store } });
    try {
      const params = { ticketID: 'TCK-1001', message: 'Sekali' };
      const before = countCarriedOut(sandbox, 'inbox.ticket.reply');
      const preview = await server.call('inbox.ticket.reply', params);
      const token = structuredOf(preview).confirmationToken as string;
      const sent = await server.call('inbox.ticket.reply', params, { confirmationToken: token });
      expect(structuredOf(sent).outcome).toBe('done');
      const replay = await server.call('inbox.ticket.reply', params, { confirmationToken: token });
      expect(textOf(replay)).toMatch(/already used/);
      expect(countCarriedOut(sandbox, 'inbox.ticket.reply') - before).toBe(1);

      const lines = store.auditLines.map((line) => JSON.parse(line) as Record<string, unknown>);
      const done = lines.filter((line) => line.operationId === 'inbox.ticket.reply' && line.outcome === 'done');
      expect(
        lines.filter((line) => line.outcome === 'done' && line.confirmation === 'not needed'),
        `a gated write recorded as done without a yes: ${JSON.stringify(lines)}`,
      ).toHaveLength(0);
      expect(done, JSON.stringify(lines)).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
