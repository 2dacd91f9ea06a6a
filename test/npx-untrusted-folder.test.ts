// The command the setup command writes is run by hosts in the folder they were opened in (Claude
// Code, Cursor, Gemini CLI and Codex start stdio servers in the project), and npx takes that
// folder for its project: a cloned repository's node_modules/.bin ran in place of our package, and
// its .npmrc chose the registry and the cache (found by review26a). The setup command now writes
// `--prefix <home>`, so npx's project is the user's own home wherever the host runs it.
// Offline: nothing is fetched; a run that finds no planted package simply fails.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { HOSTS, launchCommand } from '../packages/setup/src/hosts.js';

const root = mkdtempSync(join(tmpdir(), 'npx-untrusted-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A cloned repository that plants its own @engage-mcp/contact and points npm's cache into itself. */
function hostileProject(): { dir: string; ran: string; plantedCache: string } {
  const dir = join(root, 'project');
  const ran = join(root, 'planted-ran');
  const plantedCache = join(dir, 'planted-cache');
  const pkg = join(dir, 'node_modules', '@engage-mcp', 'contact');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: '@engage-mcp/contact', version: '9.9.9', bin: { 'engage-mcp-contact': 'bin.js' } }));
  writeFileSync(join(pkg, 'bin.js'), `#!/usr/bin/env node\nrequire('node:fs').writeFileSync(${JSON.stringify(ran)}, 'planted');\n`);
  chmodSync(join(pkg, 'bin.js'), 0o755);
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  const link = join(dir, 'node_modules', '.bin', 'engage-mcp-contact');
  if (!existsSync(link)) writeFileSync(link, `#!/bin/sh\nexec node ${JSON.stringify(join(pkg, 'bin.js'))}\n`, { mode: 0o755 });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'some-repo', version: '1.0.0' }));
  writeFileSync(join(dir, '.npmrc'), `cache=${plantedCache}\n`);
  return { dir, ran, plantedCache };
}

/** `command args` run in the project, offline, with `home` for HOME: nothing is fetched. */
function runIn(dir: string, home: string, command: string, args: string[]) {
  const run = spawnSync(command, args, {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: home, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
    encoding: 'utf8',
    timeout: 60_000,
    input: '',
  });
  expect(run.error).toBeUndefined();
  return run;
}

it.skipIf(process.platform === 'win32')('the command the setup command writes runs neither a project folder’s planted package nor its npm settings', () => {
  const home = join(root, 'home');
  mkdirSync(home, { recursive: true });
  const { dir, ran, plantedCache } = hostileProject();
  const { command, args } = launchCommand(HOSTS.cursor, '@engage-mcp/contact', { platform: process.platform, home });
  const run = runIn(dir, home, command, args);
  expect(existsSync(ran), `the project's planted bin ran: ${run.stderr}`).toBe(false);
  expect(existsSync(plantedCache), `npm used the project's .npmrc (cache=${plantedCache})`).toBe(false);
  expect(args.slice(0, 2)).toEqual(['--prefix', home]);
});

it.skipIf(process.platform === 'win32')('the same project without it: npx runs the planted package (what the --prefix guards against)', () => {
  const { dir, ran } = hostileProject();
  rmSync(ran, { force: true });
  const home = join(root, 'home');
  const run = runIn(dir, home, 'npx', ['-y', '@engage-mcp/contact']);
  expect(existsSync(ran), run.stderr).toBe(true);
});
