// Review 29: a write's mark and a key's reservation name their process (`pid host/start/place
// nonce`), and one whose process this host sees dead is an unknown outcome at once (review28b). The
// place (boot id, then the pid namespace that /proc/self/ns/pid names) says whose pids the name's
// pid is, and the start time is read from /proc/<pid>/stat. But /proc may not be this pid
// namespace's: a server run in a pid namespace of its own without a /proc of its own
// (`unshare --pid --fork` without --mount-proc, `bwrap --unshare-pid --ro-bind / /`) names itself by
// its pid there (1) while /proc/1 is another process (the host's init). Found: the built channel
// server, so run, with its own confirmed send still at the API, judged that send's sender (itself)
// dead: asked for the same write again, it previewed it as sent with an unknown outcome, and the yes
// to that preview sent it a second time. Now a process whose /proc does not show it under its own
// pid names no place (its pids are not for /proc to look up), as one that cannot read its boot id:
// its mark is left to the lease, its own send still "being sent".
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { serverEntry } from '../packages/sandbox/src/index.js';
import { makeClient, structuredOf, textOf, toolOf } from './helpers.js';
import { holdingSandboxPerFile } from './review28b-holding-proxy.js';

const SEND = 'channel.whatsapp.send';
const rig = holdingSandboxPerFile('review29-proc-ns-');

/** Whether a pid namespace of its own can be made here without a /proc of its own (root, Linux, unshare). */
const canUnshare = (() => {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  try {
    // In it, the process is pid 1 while /proc (this one's) shows it under another pid.
    const seen = execFileSync(
      'unshare',
      ['--pid', '--fork', process.execPath, '-e', 'process.stdout.write(`${process.pid} ${require("fs").readlinkSync("/proc/self")}`)'],
      {
        encoding: 'utf8',
        timeout: 10_000,
      },
    );
    const [pid, proc] = seen.split(' ');
    return pid === '1' && proc !== '1' && readlinkSync('/proc/self') === String(process.pid);
  } catch {
    return false;
  }
})();

/** A built channel server over stdio, started by `command` (a wrapper that runs `node <entry>`) on the state directory `dir`. */
async function channelServer(command: string, args: string[], dir: string) {
  const transport = new StdioClientTransport({
    command,
    args: [...args, process.execPath, serverEntry('channel')],
    env: {
      ...getDefaultEnvironment(),
      ENGAGE_BASE_URL: rig.proxy.baseUrl,
      ENGAGE_API_KEY: rig.sandbox.keys.full,
      ENGAGE_STATE_DIR: dir,
      ENGAGE_CONFIRM: 'all',
    },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = makeClient({ kind: 'v1' });
  await client.connect(transport);
  const call = (args: Record<string, unknown>) =>
    client.callTool({ name: toolOf(SEND), arguments: { operationId: SEND, ...args } }, undefined, { timeout: 30_000 }) as Promise<CallToolResult>;
  return { client, transport, call, stderr: () => stderr };
}
type ChannelServer = Awaited<ReturnType<typeof channelServer>>;

/**
 * `first` sends a confirmed write, held at the API; meanwhile `second` is asked for the same write
 * and its answer said yes to. Then the held write goes on. Answers what `second` said, and how many
 * times the API carried the write out.
 */
async function askedAgainWhileSent(first: ChannelServer, second: ChannelServer, msisdn: string) {
  const params = { msisdn, message: 'Halo sekali saja' };
  const token = structuredOf(await first.call({ params })).confirmationToken as string;
  expect(token).toMatch(/^ct_/);
  const { held } = rig.proxy.hold('arrival');
  const sending = first.call({ params, confirmationToken: token });
  const hold = await held;
  const again = await second.call({ params });
  const againToken = structuredOf(again).confirmationToken as string | undefined;
  const yes = againToken ? await second.call({ params, confirmationToken: againToken }) : again;
  await hold.forward();
  const answer = await sending;
  expect(structuredOf(answer).outcome, textOf(answer)).toBe('done');
  const sends = rig.sandbox.carriedOut().filter((entry) => entry.operationId === SEND && entry.params.msisdn === msisdn).length;
  return { again: textOf(again), yes: textOf(yes), sends };
}

describe.runIf(canUnshare)('two stdio servers in one pid namespace of their own, with the /proc of the namespace around it', () => {
  it("one's send still at the API is still being sent: the other, asked for it and said yes to, does not send it a second time", {
    timeout: 60_000,
  }, async () => {
    const dir = mkdtempSync(join(rig.root, 'state-'));
    const first = await channelServer('unshare', ['--pid', '--fork', '--kill-child'], dir);
    // The server is unshare's child (pid 1 in the namespace); the second joins that namespace.
    const unsharePid = first.transport.pid as number;
    const serverPid = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim().split(' ')[0] as string;
    const second = await channelServer('nsenter', ['--target', serverPid, '--pid', '--'], dir);
    try {
      const seen = await askedAgainWhileSent(first, second, '6281290290029');
      expect(seen.sends, `asked again: ${seen.again}\nyes: ${seen.yes}`).toBe(1);
      expect(seen.again).not.toMatch(/its outcome is unknown/);
      expect(seen.again).toMatch(/still being sent/);
    } finally {
      await Promise.all([first.client.close(), second.client.close()]);
    }
  });
});

/** Whether a time namespace with the boot time set off can be made here (root, Linux 5.6+, unshare). */
const canSetBootTimeOff = (() => {
  if (!canUnshare) return false;
  try {
    const offsets = execFileSync('unshare', ['--time', '--boottime', '100000', '--fork', 'cat', '/proc/self/timens_offsets'], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    return /^boottime\s+100000\s/m.test(offsets);
  } catch {
    return false;
  }
})();

describe.runIf(canSetBootTimeOff)('two stdio servers in one pid namespace, one in a time namespace with its boot time set off', () => {
  for (const sender of ['inside', 'outside'] as const)
    it(`the send of the one ${sender} it, still at the API, is still being sent: the other does not send it a second time`, { timeout: 60_000 }, async () => {
      const dir = mkdtempSync(join(rig.root, 'state-'));
      const inside = await channelServer('unshare', ['--time', '--boottime', '100000', '--fork', '--kill-child'], dir);
      const outside = await channelServer('env', [], dir);
      const [first, second] = sender === 'inside' ? [inside, outside] : [outside, inside];
      try {
        const seen = await askedAgainWhileSent(first, second, sender === 'inside' ? '6281290290031' : '6281290290032');
        expect(seen.sends, `asked again: ${seen.again}\nyes: ${seen.yes}`).toBe(1);
        expect(seen.again).not.toMatch(/its outcome is unknown/);
        expect(seen.again).toMatch(/still being sent/);
      } finally {
        await Promise.all([inside.client.close(), outside.client.close()]);
      }
    });
});
