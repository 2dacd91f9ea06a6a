// Review 28b: a confirmed contact.delete whose server was killed (SIGKILL) after the API carried it
// out (its answer held at a proxy, never read). Started again on the same state directory, the
// server warns that exactly this delete went out and its outcome is unknown; the user says yes all
// the same, and the API answers 404 (the contact is gone). Found: "Not found (HTTP 404).
// contact.delete was not carried out; nothing was changed. Use contact.list to find valid ids.",
// true of this attempt, but it sends the model after another id and reads as if the contact was
// never deleted: the earlier send (review22a names it within one process) was read from the state
// directory for the warning, and not for the refusal. Through the built server over stdio. The same
// across two replicas of the remote service on one Redis: a delete whose outcome was unknown on one
// replica (the connection broke after the API did it), said yes to again on the other.
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { WRITE_CLOCK_SKEW_MS } from '../packages/http/src/redis-guard-store.js';
import { launchServer, type LaunchedServer } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { startRedis } from './redis-server.js';
import { holdingSandboxPerFile } from './review28b-holding-proxy.js';
import { launchService, modernClient, stopService } from './service-process.js';

const rig = holdingSandboxPerFile('review28b-refused-');
const { root } = rig;

const launch = () =>
  launchServer('contact', { ENGAGE_BASE_URL: rig.proxy.baseUrl, ENGAGE_API_KEY: rig.sandbox.keys.full, ENGAGE_STATE_DIR: join(root, 'state') });
const remove = (server: LaunchedServer, args: Record<string, unknown>) =>
  server.client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', ...args } }, undefined, {
    timeout: 30_000,
  }) as Promise<CallToolResult>;

describe('review28b: a confirmed write refused by the API after a restart, its earlier send read from the state directory', () => {
  it('the refusal names the earlier send (by this server or another sharing its state directory), not "use contact.list"', { timeout: 60_000 }, async () => {
    const params = { id: rig.sandbox.tenant('A').contacts[0]!._id };
    const first = await launch();
    const preview = await remove(first, { params });
    const { held } = rig.proxy.hold('answer');
    const yes = remove(first, { params, confirmationToken: structuredOf(preview).confirmationToken }).catch((error: unknown) => error);
    const answer = await held; // the API deleted it; its answer is held
    const pid = first.transport.pid!;
    process.kill(pid, 'SIGKILL');
    await yes;
    answer.drop();
    await rig.proxy.idle();
    expect(rig.sandbox.carriedOut().filter((entry) => entry.operationId === 'contact.delete')).toHaveLength(1);

    const second = await launch();
    try {
      const again = await remove(second, { params });
      expect(textOf(again)).toMatch(/already sent exactly this contact\.delete at .*, and its outcome is unknown/);
      const refused = await remove(second, { params, confirmationToken: structuredOf(again).confirmationToken });
      expect(textOf(refused)).toMatch(/Not found \(HTTP 404\)/);
      expect(textOf(refused)).toMatch(
        /Exactly this contact\.delete was sent by this server or another one sharing its state directory \(another host, or before a restart\) at .*, and its outcome is unknown \(it may have been carried out\): the API's answer may reflect that earlier send/,
      );
      expect(textOf(refused)).not.toMatch(/Use contact\.list to find valid ids/);
    } finally {
      await second.close();
    }
  });
});

describe('review28b: the same across two replicas on one Redis', () => {
  it("a delete of unknown outcome on one replica, refused (404) when said yes to on the other, names that replica's send", { timeout: 60_000 }, async () => {
    const redis = await startRedis();
    const env = { ENGAGE_BASE_URL: rig.sandbox.baseUrl, ENGAGE_REDIS_URL: redis.url, ENGAGE_STATE_SECRET: 'a-shared-state-secret-of-more-than-32-bytes' };
    const services = [launchService(env), launchService(env)];
    const clients: Array<{ close(): Promise<unknown> }> = [];
    try {
      const [a, b] = await Promise.all(
        services.map(async (service) => {
          const client = await modernClient(await service.url, rig.sandbox.keys.full, { domain: 'contact', info: { name: 'review28b', version: '0' } });
          clients.push(client);
          return (args: Record<string, unknown>) =>
            client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', ...args } } as never) as Promise<CallToolResult>;
        }),
      );
      const params = { id: rig.sandbox.tenant('A').contacts[1]!._id };
      const preview = await a!({ params });
      rig.sandbox.injectFault({ kind: 'reset-after', operationId: 'contact.delete' });
      const unknown = await a!({ params, confirmationToken: structuredOf(preview).confirmationToken });
      expect(structuredOf(unknown).outcome, textOf(unknown)).toBe('unknown');
      // A yes given within the replicas' clock margin of that attempt counts as given before it (asked again): past it.
      await new Promise((resolve) => setTimeout(resolve, WRITE_CLOCK_SKEW_MS + 200));
      const again = await b!({ params });
      expect(textOf(again)).toMatch(
        /Warning: a replica of this service \(this one or another\) already sent exactly this contact\.delete at .*, and its outcome is unknown/,
      );
      const refused = await b!({ params, confirmationToken: structuredOf(again).confirmationToken });
      expect(textOf(refused)).toMatch(/Not found \(HTTP 404\)/);
      expect(textOf(refused)).toMatch(
        /Exactly this contact\.delete was sent by a replica of this service \(this one or another\) at .*, and its outcome is unknown \(it may have been carried out\): the API's answer may reflect that earlier send/,
      );
      expect(textOf(refused)).not.toMatch(/Use contact\.list to find valid ids/);
    } finally {
      await Promise.allSettled(clients.map((client) => client.close()));
      await Promise.all(services.map((service) => stopService(service.child)));
      await redis.stop();
    }
  });
});
