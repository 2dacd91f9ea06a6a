// The setup command given a config path where mkdir answers ENOENT below a folder that exists
// (`--config-path /proc/1/...`, noticed by review26a): Node's recursive mkdir retried it for ever,
// and the command spun at full CPU and never ended. Now it makes folders one level at a time and
// says which one it could not make, writing nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { SETUP_CLI } from './setup-run.js';

const home = mkdtempSync(join(tmpdir(), 'setup-proc-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

it.skipIf(process.platform !== 'linux' || !existsSync('/proc/1'))('a --config-path under /proc is refused, and the command ends', () => {
  const path = '/proc/1/engage-setup-test/mcp.json';
  const ran = spawnSync(
    process.execPath,
    [SETUP_CLI, '--host', 'cursor', '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-stdin', '--yes', '--config-path', path],
    { env: { PATH: process.env.PATH ?? '', HOME: home }, cwd: home, input: 'eng_live_0123456789abcdef0123456789abcdef\n', encoding: 'utf8', timeout: 20_000 },
  );
  // Before: killed by the timeout (signal set, no status).
  expect(ran.signal, 'the command never ended').toBeNull();
  expect(ran.status).not.toBe(0);
  expect(ran.stderr).toContain('/proc/1/engage-setup-test');
  expect(ran.stderr).not.toContain('0123456789abcdef0123456789abcdef');
});
