// A server started where there is no home folder: HOME unset and the user without a passwd entry
// (a container run under an arbitrary uid, a host that starts servers with a cleared environment).
// Node's os.homedir() then throws (uv_os_homedir ENOENT), and the bin's launcher asked it for the
// compile cache's folder outside its guard: every start died with a stack trace before the server
// ran, even with ENGAGE_STATE_DIR set. The cache is off there now and the server starts.
// As root the real thing is run (setpriv to a uid nobody has); elsewhere a preload makes
// homedir() throw as Node does.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { serverEntry } from '../packages/sandbox/src/index.js';
import { homelessArgs, homelessRigPerFile } from './homeless.js';

const rig = homelessRigPerFile('engage-no-home-');

/**
 * The built contact server's bin with no HOME (nor XDG_CACHE_HOME), as `command args`: the SDK's
 * transport passes HOME on whatever env it is given, so env(1) takes it out.
 */
function homelessStart(): { command: string; args: string[] } {
  return { command: 'env', args: homelessArgs(serverEntry('contact'), rig.dir, ['HOME', 'XDG_CACHE_HOME']) };
}

describe('a server started with no home folder to be found', () => {
  it('starts without its compile cache when ENGAGE_STATE_DIR says where its state goes: tools listed, a read answered', async () => {
    const stateDir = join(rig.dir, 'state');
    const { command, args } = homelessStart();
    let stderr = '';
    const transport = new StdioClientTransport({
      command,
      args,
      env: { PATH: process.env.PATH ?? '', ENGAGE_API_KEY: rig.sandbox.keys.full, ENGAGE_BASE_URL: rig.sandbox.baseUrl, ENGAGE_STATE_DIR: stateDir },
      stderr: 'pipe',
      cwd: rig.dir,
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'no-home', version: '0' });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['contact_read', 'contact_action']);
      const read = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', limit: 1 } });
      expect(read.isError, JSON.stringify(read.content)).toBeFalsy();
    } catch (error) {
      throw new Error(`${(error as Error).message}\nstderr: ${stderr}`);
    } finally {
      await client.close();
    }
    expect(stderr).not.toContain('uv_os_homedir');
    // No cache was written anywhere under the folder the server was given.
    expect(readdirSync(rig.dir).filter((name) => name !== 'state' && name !== 'homeless.cjs')).toEqual([]);
  });
});
