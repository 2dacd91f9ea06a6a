// Review 17, ENGAGE_STATE_DIR (or ENGAGE_AUDIT_LOG) set to a path of the wrong kind: a state
// folder that is a file, an audit record that is a folder. The server started without a word, its
// reads worked, and its first write answered the model "Internal error in the MCP server; nothing
// more is known", the cause (EEXIST, mkdir) only in the log. Now the start-up line says which
// setting to fix, as for any other bad setting, and so does setup for its --state-dir and
// --audit-log flags.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STARTABLE_ENV, startStderr } from './server-stderr.js';
import { setupWith } from './setup-run.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review17-state-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

/** The built contact server's first line on stderr. */
const startLine = (env: Record<string, string>) => startStderr({ HOME: home, ...STARTABLE_ENV, ...env });

describe('a state folder or audit record of the wrong kind is a configuration problem', () => {
  it('ENGAGE_STATE_DIR naming a file', async () => {
    const file = join(home, 'state');
    await writeFile(file, '');
    expect(await startLine({ ENGAGE_STATE_DIR: file })).toMatch(/not configured.*ENGAGE_STATE_DIR must name a folder, and .*state" is a file/);
  });

  it('ENGAGE_STATE_DIR below a file', async () => {
    const file = join(home, 'state');
    await writeFile(file, '');
    expect(await startLine({ ENGAGE_STATE_DIR: join(file, 'engage') })).toMatch(/ENGAGE_STATE_DIR must name a folder, and .* is below a file/);
  });

  it('ENGAGE_AUDIT_LOG naming a folder', async () => {
    const folder = join(home, 'audit');
    await mkdir(folder);
    expect(await startLine({ ENGAGE_AUDIT_LOG: folder })).toMatch(/ENGAGE_AUDIT_LOG must name a file, and .*audit" is a folder/);
  });

  it('a state folder still to be made is fine', async () => {
    expect(await startLine({ ENGAGE_STATE_DIR: join(home, 'new', 'state'), ENGAGE_LOG_LEVEL: 'info' })).toMatch(/ready/);
  });

  it('setup --state-dir naming a file is refused before anything is written', async () => {
    const file = join(home, 'state');
    await writeFile(file, '');
    const ran = await setupWith(
      home,
      ['--host', 'cursor', '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-stdin', '--yes', '--state-dir', file],
      'eng_live_0123456789abcdef\n',
    );
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/--state-dir: ENGAGE_STATE_DIR must name a folder/);
  });
});
