// A write that needs no yes, sent again after exactly that write was carried out, whose repeat the
// API refused for a reason of its own (its key's scope, a rate limit) or that never reached the API:
// since 6c8ece2/87de7d5 every such refusal was followed by "Exactly this … was sent … and it was
// carried out: the API's answer may reflect that earlier send", said only for a 404 or a rejection
// before (an answer that may be about the earlier send). A 403 for a scope, or a send that never
// left, reflects nothing of it: the model was steered to a cause that is not one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, textOf } from './helpers.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
const dir = mkdtempSync(join(tmpdir(), 'review41-refusal-not-twin-'));
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a repeat refused with a 403 does not say the refusal may reflect the earlier send', async () => {
  const server = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_CONFIRM: 'none', ENGAGE_STATE_DIR: dir } });
  try {
    const params = { msisdn: '6281377700061', message: 'Pesanan Anda sudah dikirim' };
    expect(textOf(await server.call(SEND, params))).toMatch(/^Done:/);
    sandbox.injectFault({ kind: 'status', status: 403, operationId: SEND, message: 'scope not granted' });
    const refused = await server.call(SEND, params);
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).not.toMatch(/may reflect that earlier send/);
  } finally {
    await server.close();
  }
});
