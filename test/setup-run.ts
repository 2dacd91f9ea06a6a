// The built setup command run as a person runs it, in a throwaway home: what the setup review
// tests share (the key given on stdin, confirmed with --yes).
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { HOSTS, type HostId } from '../packages/setup/src/hosts.js';
import { ROOT } from '../scripts/distribution.js';

export const SETUP_CLI = join(ROOT, 'packages', 'setup', 'dist', 'cli.js');

export interface SetupRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `--host <host> --servers contact --key-stdin --yes` in `home` (HOME and XDG_CONFIG_HOME there), `key` on stdin. */
export function setupWithKey(home: string, host: string, key: string, env: NodeJS.ProcessEnv = {}): Promise<SetupRun> {
  return setupWith(home, ['--host', host, '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-stdin', '--yes'], `${key}\n`, env);
}

/** The built setup command with these flags in `home` (HOME and XDG_CONFIG_HOME there), `stdin` as its input. */
export function setupWith(home: string, args: string[], stdin: string, env: NodeJS.ProcessEnv = {}): Promise<SetupRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SETUP_CLI, ...args], {
      env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ...env },
      cwd: home,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/** Where `host` keeps its config under `home`, on Linux. */
export const configPathIn = (home: string, host: HostId) =>
  HOSTS[host].configPath({ platform: 'linux', home, env: { XDG_CONFIG_HOME: join(home, '.config') } });

/** A throwaway home folder for each test of the file (its own hooks), removed after it: read `home.dir`. */
export function homePerTest(prefix: string): { readonly dir: string } {
  const home = { dir: '' };
  beforeEach(async () => {
    home.dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await rm(home.dir, { recursive: true, force: true });
  });
  return home;
}

/** `content` written as `host`'s config under `home` (its folders made), then setupWithKey over it: the run and the file after, as text. */
export async function setupOverConfig(
  home: string,
  host: HostId,
  content: string | Buffer,
  key: string,
): Promise<{ path: string; ran: SetupRun; after: string }> {
  const path = configPathIn(home, host);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
  const ran = await setupWithKey(home, host, key);
  return { path, ran, after: await readFile(path, 'utf8') };
}
