// The guardrails a tenant owner sets, end to end: the built servers over stdio, as a host runs
// them, against the sandbox (which counts deliveries), sharing one state directory as the seven
// servers of one machine do. Then the audit record those calls left, checked by the built bin.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { launchServer, startSandbox, type DomainName, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf, toolOf } from './helpers.js';

const run = promisify(execFile);
let sandbox: Sandbox;
let stateDir: string;
const launched: LaunchedServer[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  stateDir = mkdtempSync(join(tmpdir(), 'engage-guardrails-'));
});
afterAll(async () => {
  await Promise.all(launched.map((server) => server.close()));
  await sandbox?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

async function launch(domain: DomainName, env: Record<string, string> = {}): Promise<LaunchedServer> {
  const server = await launchServer(domain, { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_STATE_DIR: stateDir, ...env });
  launched.push(server);
  return server;
}

function call(server: LaunchedServer, operationId: string, params: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<CallToolResult> {
  return server.client.callTool({ name: toolOf(operationId), arguments: { operationId, params, ...extra } }) as Promise<CallToolResult>;
}

/** A quiet-hours window around the present minute in Jakarta (UTC+7, no daylight saving), so "now" is inside it. */
function windowAroundNow(): string {
  const minutes = (new Date().getUTCHours() * 60 + new Date().getUTCMinutes() + 7 * 60) % 1440;
  const at = (value: number) => {
    const wrapped = (value + 1440) % 1440;
    return `${String(Math.floor(wrapped / 60)).padStart(2, '0')}:${String(wrapped % 60).padStart(2, '0')}`;
  };
  return `${at(minutes - 120)}-${at(minutes + 120)}`;
}

describe('guardrails over stdio', () => {
  it('a daily cap of 3 lets exactly 3 of 20 concurrent sends through, across three server processes', async () => {
    const env = { ENGAGE_CONFIRM: 'none', ENGAGE_CAP_MESSAGES_PER_DAY: '3', ENGAGE_TIMEZONE: 'Asia/Jakarta' };
    const servers = await Promise.all([launch('channel', env), launch('channel', env), launch('channel', env)]);
    const before = countCarriedOut(sandbox, 'channel.whatsapp.send');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        call(servers[index % 3]!, 'channel.whatsapp.send', { msisdn: `0812777710${String(index).padStart(2, '0')}`, message: `Halo ${index}` }),
      ),
    );
    const done = results.filter((result) => !result.isError);
    expect(done).toHaveLength(3);
    expect(countCarriedOut(sandbox, 'channel.whatsapp.send') - before).toBe(3);
    const refusal = results.find((result) => result.isError)!;
    expect(structuredOf(refusal).outcome).toBe('refused');
    expect(textOf(refusal)).toMatch(
      /3 of the 3 messages ENGAGE_CAP_MESSAGES_PER_DAY allows per day .*nothing was sent\. The count resets at \d{4}-\d\d-\d\d 00:00 \(Asia\/Jakarta\)\. To send more today, the tenant owner raises it by changing ENGAGE_CAP_MESSAGES_PER_DAY in the server's environment/,
    );
  });

  it('quiet hours refuse a reply; the explicit override is shown in the preview and passes', async () => {
    const inbox = await launch('inbox', { ENGAGE_QUIET_HOURS: windowAroundNow(), ENGAGE_TIMEZONE: 'Asia/Jakarta' });
    const before = countCarriedOut(sandbox, 'inbox.ticket.reply');
    const params = { ticketID: 'TCK-1001', message: 'Balasan malam' };
    const refused = await call(inbox, 'inbox.ticket.reply', params);
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/inside the quiet hours .* \(ENGAGE_QUIET_HOURS\).*nothing was sent.*quietHoursOverride: true/s);
    const preview = await call(inbox, 'inbox.ticket.reply', params, { quietHoursOverride: true });
    expect(structuredOf(preview).outcome).toBe('preview');
    expect(structuredOf(preview).preview).toMatch(/Quiet hours .* \(Asia\/Jakarta\): overridden \(quietHoursOverride\): sending at \d\d:\d\d local time/);
    const sent = await call(inbox, 'inbox.ticket.reply', params, { quietHoursOverride: true, confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
    expect(countCarriedOut(sandbox, 'inbox.ticket.reply') - before).toBe(1);
  });

  it('the same idempotency key 5 times, and after a restart, delivers once and answers the first outcome; other params are refused', async () => {
    const env = { ENGAGE_CONFIRM: 'none' };
    let inbox = await launch('inbox', env);
    const before = countCarriedOut(sandbox, 'inbox.ticket.reply');
    const params = { ticketID: 'TCK-1002', message: 'Sekali saja' };
    const first = await call(inbox, 'inbox.ticket.reply', params, { idempotencyKey: 'reply-1002-a' });
    expect(structuredOf(first).outcome).toBe('done');
    for (let round = 0; round < 4; round++) {
      const again = await call(inbox, 'inbox.ticket.reply', params, { idempotencyKey: 'reply-1002-a' });
      expect(structuredOf(again).outcome).toBe('done');
      expect(structuredOf(again).data).toEqual(structuredOf(first).data);
      expect(textOf(again)).toMatch(/first used at .*nothing was sent again/);
    }
    await inbox.close();
    inbox = await launch('inbox', env);
    const afterRestart = await call(inbox, 'inbox.ticket.reply', params, { idempotencyKey: 'reply-1002-a' });
    expect(structuredOf(afterRestart).data).toEqual(structuredOf(first).data);
    expect(countCarriedOut(sandbox, 'inbox.ticket.reply') - before).toBe(1);

    const changed = await call(inbox, 'inbox.ticket.reply', { ...params, message: 'Lain' }, { idempotencyKey: 'reply-1002-a' });
    expect(changed.isError).toBe(true);
    expect(textOf(changed)).toMatch(/idempotencyKey was used at .* with other params; nothing was sent/);
    expect(countCarriedOut(sandbox, 'inbox.ticket.reply') - before).toBe(1);
  });

  it('ENGAGE_CONFIRM operation patterns gate exactly the named operations', async () => {
    const named = await launch('campaign', { ENGAGE_CONFIRM: 'none,campaign.create' });
    expect(named.client.getInstructions()).toMatch(/ campaign\.create need the user's yes/);
    const create = await call(named, 'campaign.create', { name: 'Policy', message: 'Halo', channel: 'whatsapp' });
    expect(structuredOf(create).outcome).toBe('preview');
    const draft = sandbox.tenant('A').campaigns.find((item) => item.status === 'draft')!;
    const deleted = await call(named, 'campaign.delete', { id: draft._id });
    expect(structuredOf(deleted).outcome, textOf(deleted)).toBe('done');

    const allBut = await launch('campaign', { ENGAGE_CONFIRM: 'all,-campaign.cancel' });
    expect(allBut.client.getInstructions()).toMatch(/ campaign\.create, campaign\.send, campaign\.delete need the user's yes/);
  });

  it('the audit record holds every write once with its confirmation path and outcome; a deleted or edited line is named by verify', async () => {
    const file = join(stateDir, 'audit.jsonl');
    const bin = join('packages', 'audit', 'bin', 'engage-mcp-audit.js');
    const env = { ...process.env, ENGAGE_STATE_DIR: stateDir };
    const ok = await run(process.execPath, [bin, 'verify', file], { env });
    expect(ok.stdout).toMatch(/lines, the chain is intact/);
    const entries = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, any>);
    const done = (id: string) => entries.filter((entry) => entry.operationId === id && entry.outcome === 'done');
    expect(done('channel.whatsapp.send')).toHaveLength(3);
    expect(entries.filter((entry) => entry.operationId === 'channel.whatsapp.send' && entry.outcome === 'refused')).toHaveLength(17);
    expect(done('inbox.ticket.reply').map((entry) => entry.confirmation)).toEqual(['token', 'not needed']);
    expect(entries.filter((entry) => entry.outcome === 'repeated')).toHaveLength(5);
    expect(done('campaign.delete')).toHaveLength(1);
    expect(JSON.stringify(entries)).not.toMatch(/Balasan malam|Sekali saja|Halo|0812777710|sandbox|eng_/i);
    expect(entries[0]!.params).toMatchObject({ message: expect.stringMatching(/^<text, \d+ chars>$/) });

    const lines = readFileSync(file, 'utf8').trim().split('\n');
    const removed = join(stateDir, 'removed.jsonl');
    writeFileSync(removed, `${[...lines.slice(0, 1), ...lines.slice(2)].join('\n')}\n`);
    const edited = join(stateDir, 'edited.jsonl');
    writeFileSync(edited, `${lines.map((line, index) => (index === 2 ? line.replace('"server":"engage-mcp-', '"server":"engage-mcX-') : line)).join('\n')}\n`);
    for (const [copy, line] of [
      [removed, 2],
      [edited, 3],
    ] as const) {
      const failed = await run(process.execPath, [bin, 'verify', copy], { env }).catch((error: { code: number; stdout: string }) => error);
      expect(failed).toMatchObject({ code: 1, stdout: expect.stringContaining(`line ${line}:`) });
    }
    const cut = await run(process.execPath, [bin, 'verify', file], { env: { ...env } }).then(() => {
      writeFileSync(file, `${lines.slice(0, -1).join('\n')}\n`);
      return run(process.execPath, [bin, 'verify', file], { env }).catch((error: { code: number; stdout: string }) => error);
    });
    expect(cut).toMatchObject({ code: 1, stdout: expect.stringContaining(`line ${lines.length}: missing`) });
    const tail = await run(process.execPath, [bin, 'tail', removed, '-n', '2'], { env });
    expect(tail.stdout).toMatch(/confirmation: /);
  });
});
