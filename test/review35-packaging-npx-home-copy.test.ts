// The entry setup writes, `npx --prefix <home> -y @engage-mcp/contact`, where the package is also
// installed in the home folder (`npm install @engage-mcp/contact` in a new terminal, which opens
// there): npx finds that copy and fetches nothing, but looks for its command only in the
// node_modules/.bin folders above the folder the host starts it in, and on PATH (npm runs it there,
// not in --prefix). Outside the home folder (Claude Desktop on macOS starts servers in /) the server
// does not start. Setup wrote the entry and said nothing; now it names the copy and says to remove it.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { HOSTS, launchCommand } from '../packages/setup/src/hosts.js';
import { ROOT } from '../scripts/distribution.js';

const root = mkdtempSync(join(tmpdir(), 'npx-home-copy-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const home = join(root, 'home');
const elsewhere = join(root, 'elsewhere');
const ran = join(root, 'home-copy-ran');

/** @engage-mcp/contact as npm installs it in the home folder: the package, and its bin linked in node_modules/.bin. */
function installInHome(): void {
  const pkg = join(home, 'node_modules', '@engage-mcp', 'contact');
  mkdirSync(pkg, { recursive: true });
  mkdirSync(elsewhere, { recursive: true });
  writeFileSync(join(home, 'package.json'), JSON.stringify({ dependencies: { '@engage-mcp/contact': '^0.1.0' } }));
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: '@engage-mcp/contact', version: '0.1.0', bin: { 'engage-mcp-contact': 'bin.js' } }));
  writeFileSync(join(pkg, 'bin.js'), `#!/usr/bin/env node\nrequire('node:fs').writeFileSync(${JSON.stringify(ran)}, 'ran');\n`);
  chmodSync(join(pkg, 'bin.js'), 0o755);
  mkdirSync(join(home, 'node_modules', '.bin'), { recursive: true });
  symlinkSync('../@engage-mcp/contact/bin.js', join(home, 'node_modules', '.bin', 'engage-mcp-contact'));
}
installInHome();

const quietEnv = { PATH: process.env.PATH ?? '', HOME: home, npm_config_offline: 'true', npm_config_update_notifier: 'false' };

it.skipIf(process.platform === 'win32')('npm: the written command, started outside the home folder, finds the home copy and then cannot run it', () => {
  const { command, args } = launchCommand(HOSTS.cursor, '@engage-mcp/contact', { platform: process.platform, home });
  const run = spawnSync(command, args, { cwd: elsewhere, env: quietEnv, encoding: 'utf8', timeout: 60_000, input: '' });
  expect(run.error).toBeUndefined();
  expect(existsSync(ran), run.stderr).toBe(false);
  expect(run.status).not.toBe(0);
  expect(run.stderr).toMatch(/engage-mcp-contact: not found/);
});

it.skipIf(process.platform === 'win32')('setup says so, naming the copy and how to remove it, and only for the servers that have one', () => {
  const run = spawnSync(
    process.execPath,
    [
      join(ROOT, 'packages', 'setup', 'dist', 'cli.js'),
      '--host',
      'cursor',
      '--servers',
      'contact,campaign',
      '--base-url',
      'https://api.example.com',
      '--key-stdin',
      '--yes',
    ],
    { cwd: elsewhere, env: quietEnv, encoding: 'utf8', input: 'sk_live_home_copy_1234\n' },
  );
  expect(run.status, run.stderr).toBe(0);
  const copy = join(home, 'node_modules', '@engage-mcp', 'contact');
  expect(run.stdout).toContain(`engage-contact: @engage-mcp/contact is installed in ${copy}.`);
  expect(run.stdout).toContain(`npm uninstall @engage-mcp/contact, run in ${home}`);
  expect(run.stdout).not.toContain('@engage-mcp/campaign is installed');
  // A second run, which changes nothing, says it again.
  const again = spawnSync(
    process.execPath,
    [
      join(ROOT, 'packages', 'setup', 'dist', 'cli.js'),
      '--host',
      'cursor',
      '--servers',
      'contact',
      '--base-url',
      'https://api.example.com',
      '--key-stdin',
      '--yes',
    ],
    { cwd: elsewhere, env: quietEnv, encoding: 'utf8', input: 'sk_live_home_copy_1234\n' },
  );
  expect(again.stdout).toContain('nothing to change');
  expect(again.stdout).toContain(`engage-contact: @engage-mcp/contact is installed in ${copy}.`);
});
