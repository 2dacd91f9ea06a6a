// Where no home folder can be found (HOME unset and the user without a passwd entry: a container run
// under an arbitrary uid), the README says a server starts without its code cache, and that a
// state directory that cannot be made refuses writes as not sent, never stopping the server; and
// that remote mode does not use ENGAGE_STATE_DIR or ENGAGE_AUDIT_LOG at all. But the default state
// directory was asked of os.homedir() while the settings were read, which throws there
// (uv_os_homedir ENOENT): a stdio server left without ENGAGE_STATE_DIR died at start with a stack
// trace, and the remote service refused to start ("not started: A system error occurred …"), as it
// did for an ENGAGE_STATE_DIR that is relative or an ENGAGE_AUDIT_LOG that names a folder.
// As root the real thing is run (setpriv to a uid nobody has); elsewhere a preload makes homedir()
// throw as Node does (as test/review23a-no-home.test.ts does).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { serverEntry } from '../packages/sandbox/src/index.js';
import { textOf } from './helpers.js';
import { homelessArgs, homelessRigPerFile } from './homeless.js';
import { launchService, stopService } from './service-process.js';

const rig = homelessRigPerFile('engage-no-home-state-');

/** `node <script>` with no HOME (nor XDG_STATE_HOME, XDG_CACHE_HOME) and no home folder to be found, as `command args`. */
function homeless(script: string): { command: string; args: string[] } {
  return { command: 'env', args: homelessArgs(script, rig.dir, ['HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME']) };
}

describe('a stdio server with no home folder and no ENGAGE_STATE_DIR', () => {
  it('starts and answers reads; a write is refused as not sent, and its log says to set ENGAGE_STATE_DIR', async () => {
    const { command, args } = homeless(serverEntry('contact'));
    let stderr = '';
    const transport = new StdioClientTransport({
      command,
      args,
      env: { PATH: process.env.PATH ?? '', ENGAGE_API_KEY: rig.sandbox.keys.full, ENGAGE_BASE_URL: rig.sandbox.baseUrl, ENGAGE_CONFIRM: 'none' },
      stderr: 'pipe',
      cwd: rig.dir,
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'no-home-state', version: '0' });
    const before = rig.sandbox.carriedOut().length;
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['contact_read', 'contact_action']);
      const read = (await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', limit: 1 } })) as CallToolResult;
      expect(read.isError, textOf(read)).toBeFalsy();
      const write = (await client.callTool({
        name: 'contact_action',
        arguments: { operationId: 'contact.create', params: { name: 'No Home', msisdn: '081277770001' } },
      })) as CallToolResult;
      expect(write.isError, textOf(write)).toBe(true);
      expect(textOf(write)).toContain('Nothing was sent');
      expect(textOf(write)).toContain('set ENGAGE_STATE_DIR to an absolute folder');
    } catch (error) {
      throw new Error(`${(error as Error).message}\nstderr: ${stderr.slice(-2000)}`);
    } finally {
      await client.close();
    }
    expect(rig.sandbox.carriedOut().length).toBe(before);
    expect(stderr).not.toContain('uv_os_homedir');
    expect(stderr).toMatch(/no home folder[^\n]*ENGAGE_STATE_DIR/);
  });
});

describe('the remote service, which keeps no state directory', () => {
  it('starts with no home folder to be found', async () => {
    const { command, args } = homeless('packages/http/dist/cli.js');
    const child = spawn(command, args, {
      env: { PATH: process.env.PATH ?? '', ENGAGE_HTTP_PORT: '0', ENGAGE_BASE_URL: rig.sandbox.baseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stderr: string[] = [];
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const first = new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
    const started = await Promise.race([first.then((line) => JSON.parse(line) as { url?: string }), exit.then((code) => ({ exitCode: code }))]);
    await stopService(child);
    expect(started, stderr.join('')).toHaveProperty('url');
    expect(stderr.join('')).not.toContain('uv_os_homedir');
  });

  it('starts whatever ENGAGE_STATE_DIR and ENGAGE_AUDIT_LOG say, since it does not use them', async () => {
    const service = launchService({ ENGAGE_BASE_URL: rig.sandbox.baseUrl, ENGAGE_STATE_DIR: 'state', ENGAGE_AUDIT_LOG: rig.dir });
    try {
      const url = await service.url;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await stopService(service.child);
    }
  });
});
