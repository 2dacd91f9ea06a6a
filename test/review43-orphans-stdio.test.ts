// Review 43 (D5): the audit line of a write whose server died mid-send. The line is appended after
// the answer, so a stdio server killed (SIGKILL) while its confirmed contact.delete was at the API
// (the API carried it out; its answer held at a proxy, never read) left no line at all for exactly
// the write an operator most needs in the record. Its mark in the state directory now keeps the line
// but for the outcome; another server sharing the directory appends it as `unknown` (`orphaned`),
// once: at its first write (the sweep of its first turn), or when the same write is claimed again.
// A live server's write still at the API is never taken for one. Built servers over stdio.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { launchServer, type LaunchedServer } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { holdingSandboxPerFile, killServer } from './review28b-holding-proxy.js';

const rig = holdingSandboxPerFile('review43-orphans-');
const AUDIT_CLI = new URL('../packages/audit/bin/engage-mcp-audit.js', import.meta.url).pathname;

const running: LaunchedServer[] = [];
afterEach(async () => {
  await Promise.allSettled(running.splice(0).map((server) => server.close()));
});

async function launch(stateDir: string): Promise<LaunchedServer> {
  const server = await launchServer('contact', { ENGAGE_BASE_URL: rig.proxy.baseUrl, ENGAGE_API_KEY: rig.sandbox.keys.full, ENGAGE_STATE_DIR: stateDir });
  running.push(server);
  return server;
}

const remove = (server: LaunchedServer, args: Record<string, unknown>) =>
  server.client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', ...args } }, undefined, {
    timeout: 30_000,
  }) as Promise<CallToolResult>;

/** contact.delete of `id`, previewed and said yes to by token: its answer. */
async function deleteConfirmed(server: LaunchedServer, id: string): Promise<CallToolResult> {
  const preview = await remove(server, { params: { id } });
  return remove(server, { params: { id }, confirmationToken: structuredOf(preview).confirmationToken });
}

/** Starts contact.delete of `id` on `server` and answers once the API has carried it out, its answer held. */
async function deleteHeld(server: LaunchedServer, id: string) {
  const preview = await remove(server, { params: { id } });
  const { held } = rig.proxy.hold('answer');
  const reply = remove(server, { params: { id }, confirmationToken: structuredOf(preview).confirmationToken }).catch((error: unknown) => error);
  return { answer: await held, reply };
}

/** Kills the server whose write is held at the API; the API did it, its answer is lost. */
async function killWithWriteOut(server: LaunchedServer, id: string): Promise<void> {
  const { answer, reply } = await deleteHeld(server, id);
  await killServer(server);
  answer.drop();
  await reply;
  await rig.proxy.idle();
}

const recordOf = (stateDir: string) =>
  readFileSync(join(stateDir, 'audit.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const linesFor = (stateDir: string, id: string) => recordOf(stateDir).filter((line) => (line.params as { id?: unknown }).id === id);

function verify(stateDir: string): string {
  return execFileSync(process.execPath, [AUDIT_CLI, 'verify', '--state-dir', stateDir], { encoding: 'utf8' });
}

/** The tenant's contacts as they were at first (a delete takes one out of the sandbox's list). */
let contactIds: string[] | undefined;
const contactId = (index: number) => {
  contactIds ??= rig.sandbox.tenant('A').contacts.map((contact) => contact._id);
  return contactIds[index]!;
};

describe('review43: the audit line of a write whose stdio server was killed while it was at the API', () => {
  it('two servers started later on the same state directory, each making another write: one unknown line for it, and the chain verifies', {
    timeout: 90_000,
  }, async () => {
    const stateDir = mkdtempSync(join(rig.root, 'state-'));
    const killed = contactId(0);
    const claimedBefore = Date.now();
    await killWithWriteOut(await launch(stateDir), killed);
    expect(rig.sandbox.carriedOut().filter((entry) => entry.operationId === 'contact.delete')).toHaveLength(1);

    const [second, third] = await Promise.all([launch(stateDir), launch(stateDir)]);
    const [one, two] = await Promise.all([deleteConfirmed(second!, contactId(1)), deleteConfirmed(third!, contactId(2))]);
    expect(structuredOf(one).outcome, textOf(one)).toBe('done');
    expect(structuredOf(two).outcome, textOf(two)).toBe('done');

    const orphan = linesFor(stateDir, killed);
    expect(orphan).toHaveLength(1);
    expect(orphan[0]).toMatchObject({ operationId: 'contact.delete', outcome: 'unknown', orphaned: true, confirmation: 'token', server: 'engage-mcp-contact' });
    // Dated when the write was claimed, not when its line was found.
    const at = Date.parse(orphan[0]!.time as string);
    expect(at).toBeGreaterThanOrEqual(claimedBefore - 1);
    expect(at).toBeLessThanOrEqual(Date.parse(linesFor(stateDir, contactId(1))[0]!.time as string));
    expect(recordOf(stateDir).map((line) => line.outcome)).toEqual(['unknown', 'done', 'done']);
    expect(verify(stateDir)).toMatch(/3 lines, the chain is intact/);
  });

  it("a live server's write still at the API is not taken for an orphan by another server's write", { timeout: 90_000 }, async () => {
    const stateDir = mkdtempSync(join(rig.root, 'state-'));
    const slow = contactId(3);
    const first = await launch(stateDir);
    const { answer, reply } = await deleteHeld(first, slow);
    const other = await deleteConfirmed(await launch(stateDir), contactId(4));
    expect(structuredOf(other).outcome, textOf(other)).toBe('done');
    expect(linesFor(stateDir, slow)).toHaveLength(0);
    answer.release();
    expect(structuredOf((await reply) as CallToolResult).outcome).toBe('done');
    const lines = linesFor(stateDir, slow);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ outcome: 'done' });
    expect(lines[0]!.orphaned).toBeUndefined();
    expect(verify(stateDir)).toMatch(/2 lines, the chain is intact/);
  });

  it('the killed write said yes to again on a server already running: its orphan line once, then its own', { timeout: 90_000 }, async () => {
    const stateDir = mkdtempSync(join(rig.root, 'state-'));
    const killed = contactId(5);
    const survivor = await launch(stateDir);
    // Its first turn (and sweep) done before the kill: the orphan is found by the claim of the same write.
    expect(structuredOf(await deleteConfirmed(survivor, contactId(6))).outcome).toBe('done');
    await killWithWriteOut(await launch(stateDir), killed);

    const again = await remove(survivor, { params: { id: killed } });
    expect(textOf(again)).toMatch(/and its outcome is unknown/);
    const refused = await remove(survivor, { params: { id: killed }, confirmationToken: structuredOf(again).confirmationToken });
    expect(textOf(refused)).toMatch(/Not found \(HTTP 404\)/);
    // Said yes to once more: nothing new is found.
    await deleteConfirmed(survivor, killed);

    const lines = linesFor(stateDir, killed);
    expect(lines.map((line) => [line.outcome, line.orphaned ?? false])).toEqual([
      ['unknown', true],
      ['refused', false],
      ['refused', false],
    ]);
    expect(verify(stateDir)).toMatch(/4 lines, the chain is intact/);
  });
});
