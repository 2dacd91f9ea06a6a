// A write that fails inside this server before it was sent (here: the store of confirmed writes
// fails to mark it, as a full disk would: ENOSPC) was answered "Internal error in the MCP server;
// nothing more is known", while its outcome said refused and the confirmationToken it came with
// was spent: the model learnt neither that nothing was sent nor how to try again. It is told both.
import { expect, it } from 'vitest';
import { MemoryGuardStore } from '../shared/src/call/guard-store.js';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => {
  sandbox = started;
});

/** A store whose disk is full when a confirmed write is to be marked. */
class FullDiskStore extends MemoryGuardStore {
  async claimWrite(): Promise<undefined> {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  }
}

it('a confirmed write that fails in the server before it is sent says it was not sent, and that the token is spent', async () => {
  const server = await serve('inbox.ticket.reply', { server: { guardStore: () => new FullDiskStore(Date.now) } });
  const params = { ticketID: 'TCK-1001', message: 'Your order ships today.' };
  const preview = await server.call('inbox.ticket.reply', params);
  const token = structuredOf(preview).confirmationToken as string;
  expect(token).toMatch(/^ct_/);
  const result = await server.call('inbox.ticket.reply', params, { confirmationToken: token });
  const text = textOf(result);
  expect(result.isError).toBe(true);
  expect(structuredOf(result)).toMatchObject({ operationId: 'inbox.ticket.reply', outcome: 'refused' });
  expect(text).toMatch(/inbox\.ticket\.reply was not sent/);
  expect(text).toMatch(/The confirmationToken is spent: to try again, call without it/);
  expect(text).not.toMatch(/nothing more is known|ENOSPC/);
  expect(sandbox.carriedOut()).toEqual([]);
  // And the token, sent again, says the same: nothing was carried out with it.
  const again = await server.call('inbox.ticket.reply', params, { confirmationToken: token });
  expect(textOf(again)).toMatch(/nothing was carried out with it/);
});

it('an ungated write that fails in the server before it is sent says it was not sent', async () => {
  const server = await serve('inbox.ticket.close', {
    server: {
      guardStore: () =>
        Object.assign(new MemoryGuardStore(Date.now), {
          ready: async () => {
            throw new Error('EIO: i/o error, open');
          },
        }),
    },
  });
  const result = await server.call('inbox.ticket.close', { ticketID: 'TCK-1001' });
  expect(result.isError).toBe(true);
  expect(textOf(result)).toMatch(/inbox\.ticket\.close was not sent/);
  expect(textOf(result)).not.toMatch(/confirmationToken/);
  expect(sandbox.carriedOut()).toEqual([]);
});
