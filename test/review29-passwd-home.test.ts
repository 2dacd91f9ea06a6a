// Review 29: review28e passed over a relative or empty HOME for the passwd entry's home, so that
// the state directory is never a folder under whatever folder the host starts a server in. But the
// passwd entry's home was taken as it stood: a uid whose entry has an empty home field
// (`app:x:4242:4242:app::/bin/sh`, a container's useradd without -d) or a relative one, run with
// HOME unset or relative, kept its counters, idempotency keys and audit record in
// <its working folder>/.local/state/engage-mcp: one state directory per folder, inside it (a
// project the user has open), and the audit command read its default record there. Attacked as
// root with a real passwd entry (a private mount namespace binds a copy of /etc/passwd with the
// extra line over it: nothing on the machine changes). Now a passwd home that is not absolute is
// no home folder: writes are refused before anything is sent, saying to set ENGAGE_STATE_DIR, and
// the audit command says to give --state-dir, as with no passwd entry at all.
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serverEntry } from '../packages/sandbox/src/index.js';
import { expectWriteRefusedForNoHome, hasSetpriv, homelessRigPerFile } from './homeless.js';

const rig = homelessRigPerFile('review29-passwd-home-');
const UID = 42_429;
const AUDIT_BIN = resolve('packages', 'audit', 'bin', 'engage-mcp-audit.js');

/** Whether a private mount namespace can be made here (root, unshare and mount allowed). */
const canBindPasswd = (() => {
  if (!hasSetpriv) return false;
  try {
    execFileSync('unshare', ['-m', 'sh', '-c', 'mount --bind /etc/passwd /etc/passwd'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * `env` arguments that run `node <script> ...args` as UID, whose passwd entry has `home` as its home
 * field, HOME set to `envHome` (or unset), in a mount namespace of its own.
 */
function withPasswdHome(home: string, envHome: string | undefined, script: string, args: string[] = []): string[] {
  const passwd = join(rig.dir, `passwd-${home || 'empty'}`);
  writeFileSync(passwd, `${readFileSync('/etc/passwd', 'utf8')}review29:x:${UID}:${UID}:review29:${home}:/bin/sh\n`);
  chmodSync(passwd, 0o644);
  const run = [
    'env',
    ...['HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'ENGAGE_STATE_DIR', 'ENGAGE_AUDIT_LOG'].flatMap((name) => ['-u', name]),
    ...(envHome === undefined ? [] : [`HOME=${envHome}`]),
    'setpriv',
    '--reuid',
    String(UID),
    '--regid',
    String(UID),
    '--clear-groups',
    process.execPath,
    script,
    ...args,
  ];
  return ['unshare', '-m', 'sh', '-c', 'mount --bind "$0" /etc/passwd && exec "$@"', passwd, ...run];
}

const CASES = [
  ['an empty home field, HOME unset', '', undefined],
  ['an empty home field, HOME relative', '', 'home'],
  ['a relative home field, HOME unset', 'home', undefined],
] as const;

describe.runIf(canBindPasswd).each(CASES)('a passwd entry with %s', (_, home, envHome) => {
  it('the stdio server keeps nothing under its working folder and refuses a write saying to set ENGAGE_STATE_DIR', async () => {
    const envArgs = withPasswdHome(home, envHome, serverEntry('contact'));
    await expectWriteRefusedForNoHome(rig, envArgs, {}, { name: 'Passwd Home', msisdn: '081277770029' }, true);
  });

  it('the audit command does not read a record under its working folder: it says to give --state-dir', async () => {
    const cwd = mkdtempSync(join(rig.dir, 'audit-cwd-'));
    chmodSync(cwd, 0o777);
    const planted = join(cwd, home, '.local', 'state', 'engage-mcp');
    execFileSync('mkdir', ['-p', planted]);
    const line = { seq: 1, time: '2026-11-29T08:00:00.000Z', operationId: 'contact.delete', outcome: 'done', server: 'x', key: 'k', params: {} };
    writeFileSync(join(planted, 'audit.jsonl'), `${JSON.stringify(line)}\n`);
    execFileSync('chmod', ['-R', 'a+rX', cwd]);
    const [command, ...args] = withPasswdHome(home, envHome, AUDIT_BIN, ['tail']) as [string, ...string[]];
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile(command, args, { cwd }, (error, out, err) => done({ code: error ? Number(error.code ?? 1) : 0, stdout: out, stderr: err }));
    });
    expect(stdout).not.toContain('contact.delete');
    expect(code, `${stdout}${stderr}`).toBe(2);
    expect(`${stdout}${stderr}`).toContain('give --state-dir DIR or set ENGAGE_STATE_DIR');
  });
});
