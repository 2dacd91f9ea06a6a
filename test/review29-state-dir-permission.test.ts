// Review 29 noticed: a state directory the server's user may not write (its own folder made
// read-only, or one under it) refused every
// write with "permission denied, EACCES … Fix the error and ask again": true, but no help to the
// person reading it. It now says what to do: let this user write there, or point ENGAGE_STATE_DIR
// at a folder it may write. Runs as root with setpriv (another uid); skipped elsewhere.
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverEntry } from '../packages/sandbox/src/index.js';
import { makeClient, structuredOf, textOf } from './helpers.js';
import { hasSetpriv, homelessArgs, homelessRigPerFile } from './homeless.js';

const rig = homelessRigPerFile('review29-permission-');
let stateDir: string;
beforeAll(() => {
  // The server's user's own folder, made read-only (0500): a write to it fails EACCES.
  stateDir = mkdtempSync(join(tmpdir(), 'review29-read-only-'));
  if (hasSetpriv) chownSync(stateDir, 54321, 54321);
  chmodSync(stateDir, 0o500);
});
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

describe.skipIf(!hasSetpriv)('a state directory this user may not write', () => {
  it('refuses the write before sending, saying what to do about it', async () => {
    const args = homelessArgs(serverEntry('contact'), rig.dir, ['XDG_STATE_HOME', 'XDG_CACHE_HOME'], { HOME: rig.dir });
    const transport = new StdioClientTransport({
      command: 'env',
      args,
      env: {
        PATH: process.env.PATH ?? '',
        ENGAGE_API_KEY: rig.sandbox.keys.full,
        ENGAGE_BASE_URL: rig.sandbox.baseUrl,
        ENGAGE_CONFIRM: 'none',
        ENGAGE_STATE_DIR: stateDir,
      },
      stderr: 'pipe',
      cwd: rig.dir,
    });
    const client = makeClient({ kind: 'v1' });
    await client.connect(transport);
    try {
      const params = { name: 'Permission Test', msisdn: '081299990001' };
      const result = await client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.create', params } });
      const text = textOf(result as never);
      expect(result.isError, text).toBe(true);
      expect(structuredOf(result as never).outcome, text).toBe('refused');
      expect(text).toMatch(/permission denied/);
      expect(text).toMatch(/let this user write/i);
      expect(text).toMatch(/set ENGAGE_STATE_DIR/);
      expect(rig.sandbox.carriedOut().filter((entry) => JSON.stringify(entry).includes('081299990001'))).toHaveLength(0);
    } finally {
      await client.close();
    }
  });
});
