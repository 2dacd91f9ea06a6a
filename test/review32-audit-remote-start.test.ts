// Review 32, remote mode's audit record with its first lines removed. `verify --remote` takes a
// record that begins after line 1 as one whose oldest lines the cap dropped, and said so ("lines 6
// to 30 (the cap dropped the older ones), the chain is intact"), whatever its length: whoever can
// write to the service's Redis could `LTRIM` a key's first writes away unseen. The cap trims each
// list to exactly 10,000 lines in the step that appends, so a record that begins after line 1 with
// fewer lines lost them otherwise; verify now names that. A record the cap did trim still verifies.
// Real Redis (the store's appends), the built command (`npm run build` first).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuditEntry, REMOTE_AUDIT_KEPT_LINES } from '../shared/src/call/audit.js';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { AUDIT_MAX_LINES, auditListKey, RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { type AuditRun, runAudit } from './helpers/audit-command.js';

const STATE_SECRET = 'a-shared-state-secret-of-more-than-32-bytes';
const dir = mkdtempSync(join(tmpdir(), 'review32-audit-remote-'));
let redis: RedisServer;
let client: RedisClient;
let store: RedisGuardStore;

beforeAll(async () => {
  redis = await startRedis();
  client = await connectRedis(redis.url);
  store = new RedisGuardStore(client, { stateSecret: new TextEncoder().encode(STATE_SECRET) });
});
afterAll(async () => {
  await client?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const entry = (key: string, n: number): AuditEntry => ({
  time: new Date(1_700_000_000_000 + n).toISOString(),
  key,
  server: 'engage-mcp-channel',
  operationId: 'channel.whatsapp.send',
  paramsDigest: `digest-${n}`,
  params: { channelID: `CH-${n}`, message: '<text, 4 chars>' },
  confirmation: 'token',
  outcome: 'done',
});

/** `engage-mcp-audit verify --remote` of the key's list as LRANGE 0 -1 exports it. */
async function verifyExport(key: string): Promise<AuditRun> {
  const lines = (await client.command(['LRANGE', auditListKey(key), 0, -1])) as string[];
  const file = join(dir, `${key}.jsonl`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return runAudit(['verify', '--remote', file], { env: { PATH: process.env.PATH ?? '', ENGAGE_STATE_SECRET: STATE_SECRET } });
}

describe('verify --remote and a record that begins after line 1', () => {
  it('the cap verify assumes is the one the store trims to', () => {
    expect(REMOTE_AUDIT_KEPT_LINES).toBe(AUDIT_MAX_LINES);
  });

  it('first lines removed from the list (LTRIM) are named, not taken for the cap', async () => {
    for (let n = 1; n <= 30; n++) await store.appendAudit(entry('trimmed', n));
    await client.command(['LTRIM', auditListKey('trimmed'), 5, -1]);
    const { code, stdout } = await verifyExport('trimmed');
    expect(stdout).toContain("line 1: the record's first 5 lines are missing");
    expect(stdout).not.toContain('the chain is intact');
    expect(code).toBe(1);
  });

  it("names the key its lines are of, so one tenant's record moved under another's name is seen", async () => {
    // Every key's list is chained with the one secret: a whole list renamed onto another key's name still verifies.
    for (let n = 1; n <= 3; n++) await store.appendAudit(entry('tenant-a', n));
    await client.command(['RENAME', auditListKey('tenant-a'), auditListKey('tenant-b')]);
    const { code, stdout } = await verifyExport('tenant-b');
    expect(stdout).toContain('3 lines, the chain is intact; every line is of key tenant-a.');
    expect(code).toBe(0);
  });

  it('a record the cap trimmed still verifies, from the line it starts at', { timeout: 120_000 }, async () => {
    const appends = AUDIT_MAX_LINES + 5;
    for (let n = 1; n <= appends; n++) await store.appendAudit(entry('capped', n));
    const { code, stdout } = await verifyExport('capped');
    expect(stdout).toContain(`lines 6 to ${appends} (the cap dropped the older ones), the chain is intact`);
    expect(code).toBe(0);
  });
});
