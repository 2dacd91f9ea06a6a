// A built script run with no home folder to be found, as a container under an arbitrary uid runs
// it: as root, another uid without a passwd entry (setpriv); elsewhere, os.homedir() made to throw
// what Node throws then. The SDK's stdio transport passes HOME on whatever env it is given, so
// env(1) takes the named variables out.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { makeClient, textOf } from './helpers.js';

/** What Node throws from os.homedir() when HOME is unset and getpwuid_r finds no user. */
const HOMELESS = `const os = require('node:os');
os.homedir = () => { const error = new Error('A system error occurred: uv_os_homedir returned ENOENT (no such file or directory)'); error.code = 'ERR_SYSTEM_ERROR'; throw error; };
`;

/** Whether a real homeless run is possible here: as root, with setpriv (else a preload stands in). */
export const hasSetpriv = (() => {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * The arguments of `env` that run `node <script>` homeless, `unset` taken out of its environment and
 * `set` put in (a relative HOME, say); `scratch` holds the preload where one is needed.
 */
export function homelessArgs(script: string, scratch: string, unset: readonly string[], set: Record<string, string> = {}): string[] {
  const without = [...unset.flatMap((name) => ['-u', name]), ...Object.entries(set).map(([name, value]) => `${name}=${value}`)];
  if (hasSetpriv) return [...without, 'setpriv', '--reuid', '54321', '--regid', '54321', '--clear-groups', process.execPath, script];
  const preload = join(scratch, 'homeless.cjs');
  writeFileSync(preload, HOMELESS);
  return [...without, process.execPath, '--require', preload, script];
}

/**
 * The sandbox, and a scratch folder any uid may use (a homeless run's working folder, and its
 * preload), for one test file (its own hooks): read `sandbox` and `dir` in tests.
 */
export function homelessRigPerFile(prefix: string): { readonly sandbox: Sandbox; readonly dir: string } {
  const rig = {} as { sandbox: Sandbox; dir: string };
  beforeAll(async () => {
    rig.sandbox = await startSandbox();
    rig.dir = mkdtempSync(join(tmpdir(), prefix));
    chmodSync(rig.dir, 0o777);
  });
  afterAll(async () => {
    await rig.sandbox?.close();
    if (rig.dir) rmSync(rig.dir, { recursive: true, force: true });
  });
  return rig;
}

/**
 * Runs `env <envArgs>` (the built contact server with no usable home folder) in a fresh folder of
 * `rig.dir`, with ENGAGE_CONFIRM=none and `env`: a contact.create of `contact` is refused before
 * anything is sent, saying to set ENGAGE_STATE_DIR, and nothing is kept under the working folder.
 * `readFirst`: a read is asked first, and answers.
 */
export async function expectWriteRefusedForNoHome(
  rig: { readonly sandbox: Sandbox; readonly dir: string },
  envArgs: string[],
  env: Record<string, string>,
  contact: { name: string; msisdn: string },
  readFirst = false,
): Promise<void> {
  const cwd = mkdtempSync(join(rig.dir, 'cwd-'));
  chmodSync(cwd, 0o777);
  const transport = new StdioClientTransport({
    command: 'env',
    args: envArgs,
    env: { PATH: process.env.PATH ?? '', ENGAGE_API_KEY: rig.sandbox.keys.full, ENGAGE_BASE_URL: rig.sandbox.baseUrl, ENGAGE_CONFIRM: 'none', ...env },
    stderr: 'pipe',
    cwd,
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = makeClient({ kind: 'v1' });
  const before = rig.sandbox.carriedOut().length;
  await client.connect(transport);
  try {
    if (readFirst) {
      const read = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', limit: 1 } });
      expect(read.isError, `${textOf(read)}\n${stderr}`).toBeFalsy();
    }
    const write = await client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.create', params: contact } });
    expect(write.isError, `${textOf(write)}\n${stderr}`).toBe(true);
    expect(textOf(write)).toContain('set ENGAGE_STATE_DIR to an absolute folder');
    expect(textOf(write)).toContain('Nothing was sent');
  } finally {
    await client.close();
  }
  expect(rig.sandbox.carriedOut().length).toBe(before);
  expect(readdirSync(cwd)).toEqual([]);
}
