// The guardrails after issue 21: quietHoursOverride bound to what the person confirmed, the
// idempotencyKey kept only as a keyed digest (and refused when it holds the API key), and an audit
// record that says what each call did: a call that sent nothing is never 'done', and it carries
// the confirmation path it came with.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { MemoryGuardStore } from '../shared/src/call/guard-store.js';
import { DOMAINS, countCarriedOut, inProcess, structuredOf, textOf, WAIT_UNDER_LOAD } from './helpers.js';
import { envelope, startHostileApi, type HostileApi } from './hostile-api.js';

let sandbox: Sandbox;
let api: HostileApi;
const dirs: string[] = [];
beforeAll(async () => {
  sandbox = await startSandbox();
  api = await startHostileApi();
});
afterAll(async () => {
  await sandbox?.close();
  await api?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const QUIET = { ENGAGE_QUIET_HOURS: '21:00-08:00', ENGAGE_TIMEZONE: 'UTC' };
const reply = { ticketID: 'TCK-1001', message: 'Balasan larut malam' };
const entriesOf = (store: MemoryGuardStore) => store.auditLines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe('quietHoursOverride is bound to the confirmation', () => {
  it('a preview made with the override says so before the quiet hours, and its token then sends inside them', async () => {
    let clock = Date.UTC(2026, 2, 1, 20, 58);
    const server = await inProcess(DOMAINS.inbox!, sandbox, { env: QUIET, server: { now: () => clock } });
    try {
      const preview = await server.call('inbox.ticket.reply', reply, { quietHoursOverride: true });
      expect(structuredOf(preview).preview).toMatch(
        /Quiet hours 21:00-08:00 \(UTC\): now outside them: sending at 20:58 local time; overridden \(quietHoursOverride\): it is sent even if the quiet hours/,
      );
      clock = Date.UTC(2026, 2, 1, 21, 2);
      const before = countCarriedOut(sandbox, 'inbox.ticket.reply');
      const token = structuredOf(preview).confirmationToken as string;
      const sent = await server.call('inbox.ticket.reply', reply, { confirmationToken: token, quietHoursOverride: true });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      expect(countCarriedOut(sandbox, 'inbox.ticket.reply') - before).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('a token from a preview with the override does not carry a call without it, nor the reverse: the person is shown the call again', async () => {
    const clock = Date.UTC(2026, 2, 1, 20, 0);
    const server = await inProcess(DOMAINS.inbox!, sandbox, { env: QUIET, server: { now: () => clock } });
    try {
      const before = countCarriedOut(sandbox, 'inbox.ticket.reply');
      for (const [shown, repeated] of [
        [true, false],
        [false, true],
      ]) {
        const preview = await server.call('inbox.ticket.reply', reply, { quietHoursOverride: shown });
        const token = structuredOf(preview).confirmationToken as string;
        const again = await server.call('inbox.ticket.reply', reply, { confirmationToken: token, quietHoursOverride: repeated });
        expect(structuredOf(again).outcome, textOf(again)).toBe('preview');
        expect(textOf(again)).toMatch(/issued for other params, another operation or another quietHoursOverride: nothing was run/);
      }
      expect(countCarriedOut(sandbox, 'inbox.ticket.reply') - before).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe('the idempotencyKey is the model text, kept only as a digest', () => {
  it('the audit record and state.json hold its keyed digest, never its text; a repeat still answers the first outcome', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'guardrails-truth-'));
    dirs.push(dir);
    const server = await inProcess(DOMAINS.inbox!, sandbox, { env: { ENGAGE_CONFIRM: 'none' }, server: { guardStore: () => new FileGuardStore(dir) } });
    try {
      const idempotencyKey = 'order-4711-for-Budi-Santoso';
      const first = await server.call('inbox.ticket.reply', reply, { idempotencyKey });
      const again = await server.call('inbox.ticket.reply', reply, { idempotencyKey });
      expect(structuredOf(first).outcome).toBe('done');
      expect(textOf(again)).toMatch(/first answer is repeated below, and nothing was sent again/);
      const audit = readFileSync(join(dir, 'audit.jsonl'), 'utf8');
      const lines = audit
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.map((line) => line.outcome)).toEqual(['done', 'repeated']);
      expect(lines[0]!.idempotencyKeyDigest).toMatch(/^[\w-]{32}$/);
      expect(lines[1]!.idempotencyKeyDigest).toBe(lines[0]!.idempotencyKeyDigest);
      expect(audit).not.toContain('Budi');
      expect(readFileSync(join(dir, 'state.json'), 'utf8')).not.toContain('Budi');
      // Each record is a file of its own (records/): named by a hash, holding the digest only.
      const records = readdirSync(join(dir, 'records'));
      expect(records).toHaveLength(1);
      expect(records.join(' ')).not.toContain('Budi');
      expect(readFileSync(join(dir, 'records', records[0]!), 'utf8')).not.toContain('Budi');
    } finally {
      await server.close();
    }
  });

  it('an idempotencyKey holding the API key in another form is refused like params: nothing sent, nothing recorded', async () => {
    const store = new MemoryGuardStore();
    const server = await inProcess(DOMAINS.inbox!, sandbox, { env: { ENGAGE_CONFIRM: 'none' }, server: { guardStore: () => store } });
    try {
      const before = countCarriedOut(sandbox, 'inbox.ticket.reply');
      const encoded = Buffer.from(sandbox.keys.full).toString('base64url');
      const refused = await server.call('inbox.ticket.reply', reply, { idempotencyKey: encoded.slice(0, 100) });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/arguments hold the API key, a part of it or an encoding of it.*nothing was sent/);
      expect(textOf(refused)).not.toMatch(/idempotencyKey/);
      expect(countCarriedOut(sandbox, 'inbox.ticket.reply') - before).toBe(0);
      expect(store.auditLines).toHaveLength(0);
      expect(store.records.size).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe('the audit record says what each call did', () => {
  it('a person who declines the question is recorded as declined by elicitation', async () => {
    const store = new MemoryGuardStore();
    const server = await inProcess(DOMAINS.inbox!, sandbox, {
      server: { guardStore: () => store },
      elicit: () => ({ action: 'decline' }),
    });
    try {
      const declined = await server.call('inbox.ticket.reply', reply);
      expect(structuredOf(declined).outcome).toBe('declined');
      expect(entriesOf(store)).toMatchObject([{ operationId: 'inbox.ticket.reply', outcome: 'declined', confirmation: 'elicitation' }]);
    } finally {
      await server.close();
    }
  });

  it('a yes racing the same write still in flight is recorded as repeated by its token, not unknown', async () => {
    const store = new MemoryGuardStore();
    const server = await inProcess(DOMAINS.campaign!, { baseUrl: api.baseUrl, keys: { full: api.key } as never }, { server: { guardStore: () => store } });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    api.respond(async (request) => {
      if (request.method === 'GET') return envelope({ _id: 'c1', name: 'Spring', status: 'draft', channel: 'whatsapp', recipients: 10 });
      await held;
      return envelope({ _id: 'c1', status: 'sending' });
    });
    try {
      const tokens = await Promise.all([1, 2].map(async () => structuredOf(await server.call('campaign.send', { id: 'c1' })).confirmationToken as string));
      const racing = Promise.all(tokens.map((token) => server.call('campaign.send', { id: 'c1' }, { confirmationToken: token })));
      await vi.waitFor(() => expect(api.requests.filter((request) => request.method !== 'GET')).toHaveLength(1), WAIT_UNDER_LOAD);
      release();
      await racing;
      const lines = entriesOf(store).map(({ outcome, confirmation }) => ({ outcome, confirmation }));
      expect(lines).toEqual(
        expect.arrayContaining([
          { outcome: 'done', confirmation: 'token' },
          { outcome: 'repeated', confirmation: 'token' },
        ]),
      );
      expect(lines).toHaveLength(2);
    } finally {
      await server.close();
      api.requests.length = 0;
      api.respond(() => envelope([]));
    }
  });
});
