// Review 22a: a stdio server remembers each write it sent for half an hour (journal.ts), so a
// second yes to the same write is warned ("this server already sent exactly this … at …") or
// refused (the same write still on its way). Its memory is the process's: the host restarting the
// server (a crash, a timeout, the user's restart), or a second host running the same server with
// the same key, starts with none, though the seven servers already share one state directory for
// the other guardrails. Attacked: channel.whatsapp.send confirmed and sent, the server restarted,
// the model asks again; and a send still at the API while another process of the server is asked
// for the same one. Found: a fresh preview with no warning, and a second send on its yes. Now the
// file store keeps each confirmed write's last attempt (as Redis does for remote replicas).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { DOMAINS, countCarriedOut, inProcess, requestsAtApi, structuredOf, textOf, until } from './helpers.js';

let sandbox: Sandbox;
let dir: string;
beforeEach(async () => {
  sandbox = await startSandbox();
  dir = mkdtempSync(join(tmpdir(), 'review22a-'));
});
afterEach(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One process of the channel server, with the state directory every stdio server of this machine shares. */
const serve = () => inProcess(DOMAINS.channel!, sandbox, { server: { guardStore: () => new FileGuardStore(dir) } });
const params = { msisdn: '6281299990004', message: 'Promo hari ini' };
const sends = () => countCarriedOut(sandbox, 'channel.whatsapp.send');

it('review22a: after a restart, a new preview of a write just sent says it was sent', async () => {
  const before = await serve();
  const preview = await before.call('channel.whatsapp.send', params);
  const sent = await before.call('channel.whatsapp.send', params, { confirmationToken: structuredOf(preview).confirmationToken });
  expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
  await before.close();

  const after = await serve();
  try {
    const again = await after.call('channel.whatsapp.send', params);
    expect(structuredOf(again).outcome).toBe('preview');
    // The journal of the process that sent it is gone: the state directory cannot tell which process sent it.
    expect(textOf(again)).toMatch(
      /Warning: this server or another one sharing its state directory \(another host, or before a restart\) already sent exactly this channel\.whatsapp\.send at .*, and it was carried out\./,
    );
    expect(sends()).toBe(1);
  } finally {
    await after.close();
  }
});

it('review22a: a send still at the API is not sent again by another process of the server', async () => {
  const first = await serve();
  const second = await serve();
  try {
    const [previewA, previewB] = [await first.call('channel.whatsapp.send', params), await second.call('channel.whatsapp.send', params)];
    sandbox.injectFault({ kind: 'delay', delayMs: 1500, operationId: 'channel.whatsapp.send' });
    const slow = first.call('channel.whatsapp.send', params, { confirmationToken: structuredOf(previewA).confirmationToken });
    // The second yes comes once the first send is at the API (held there 1.5 s), not after a fixed wait.
    await until('the first send at the API', () => requestsAtApi(sandbox, 'channel.whatsapp.send') === 1);
    const racing = await second.call('channel.whatsapp.send', params, { confirmationToken: structuredOf(previewB).confirmationToken });
    expect(structuredOf(await slow).outcome).toBe('done');
    expect(structuredOf(racing).outcome, textOf(racing)).not.toBe('done');
    expect(textOf(racing)).toMatch(/still being sent by this server or another one sharing its state directory|was sent by this server or another one sharing/);
    expect(sends()).toBe(1);
  } finally {
    await first.close();
    await second.close();
  }
});
