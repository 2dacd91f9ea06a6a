// The built setup command run as a person runs it, in a throwaway home: what the setup review
// tests share (the key given on stdin, confirmed with --yes).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
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
