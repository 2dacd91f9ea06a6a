// `npm test` first makes sure of Chromium and Redis (scripts/ensure-*.mjs). A CHROMIUM_PATH naming a
// missing binary made the script, as root on Debian, install Debian's chromium (which lands in
// /usr/bin, not there) and carry on to browser tests that could not start; and redis-cli, which the
// remote-mode tests export the audit record with, was never looked for. A fake apt-get first on
// PATH notes any install instead of running one.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';

const script = (name: string) => fileURLToPath(new URL(`../scripts/${name}`, import.meta.url));
let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engage-ensure-'));
  writeFileSync(join(dir, 'apt-get'), `#!/bin/sh\necho "$@" >> ${JSON.stringify(join(dir, 'apt-get.log'))}\n`);
  chmodSync(join(dir, 'apt-get'), 0o755);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function ensure(name: string, env: Record<string, string>) {
  const ran = spawnSync(process.execPath, [script(name)], { env: { PATH: `${dir}:${process.env.PATH ?? ''}`, ...env }, encoding: 'utf8' });
  const installs = existsSync(join(dir, 'apt-get.log')) ? readFileSync(join(dir, 'apt-get.log'), 'utf8') : '';
  return { code: ran.status, stderr: ran.stderr, installs };
}

it('a CHROMIUM_PATH that names no file stops the tests, saying so, and installs nothing', () => {
  const missing = join(dir, 'chrome', 'chrome');
  const ran = ensure('ensure-chromium.mjs', { CHROMIUM_PATH: missing });
  expect(ran.installs).toBe('');
  expect(ran.code).toBe(1);
  expect(ran.stderr).toContain(`npm test needs Chromium at ${missing}`);
});

it('an ENGAGE_TEST_REDIS_CLI that names no file stops the tests, saying so, and installs nothing', () => {
  const missing = join(dir, 'redis-cli');
  const ran = ensure('ensure-redis.mjs', { ENGAGE_TEST_REDIS_SERVER: process.execPath, ENGAGE_TEST_REDIS_CLI: missing });
  expect(ran.installs).toBe('');
  expect(ran.code).toBe(1);
  expect(ran.stderr).toContain(`npm test needs redis-cli at ${missing}`);
  expect(ran.stderr).toContain('set ENGAGE_TEST_REDIS_CLI');
});

it('with both there, nothing is said or installed', () => {
  const ran = ensure('ensure-redis.mjs', { ENGAGE_TEST_REDIS_SERVER: process.execPath, ENGAGE_TEST_REDIS_CLI: process.execPath });
  expect([ran.code, ran.stderr, ran.installs]).toEqual([0, '', '']);
});
