// Review 39, a new key given to some servers only: run with --servers contact and a new key (the
// old one revoked, say), setup said "engage-contact: ENGAGE_API_KEY changed" and nothing of the
// other engage servers in the file, which kept the old key and would fail in the host. Now the
// servers a run leaves as they are, holding another key or address than it wrote, are named (the
// setting, never its value), with the run that gives them this one; the same key and address say
// nothing.
import { describe, expect, it } from 'vitest';
import { homePerTest, setupWith } from './setup-run.js';

const home = homePerTest('engage-review39-others-');
const OLD_KEY = 'eng_live_39aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const NEW_KEY = 'eng_live_39bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

const run = (host: string, servers: string, key: string, baseUrl = 'https://api.example.com') =>
  setupWith(home.dir, ['--host', host, '--servers', servers, '--base-url', baseUrl, '--key-stdin', '--yes'], `${key}\n`);

describe('our servers a run leaves as they are', () => {
  it.each(['cursor', 'codex', 'claude-code', 'gemini'])('%s: a new key for one server names the others that keep the old one', async (host) => {
    expect((await run(host, 'contact,campaign,inbox', OLD_KEY)).code).toBe(0);
    const ran = await run(host, 'contact', NEW_KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(
      'Not part of this run:\n  engage-campaign, engage-inbox keep another ENGAGE_API_KEY than this run wrote; run again with --servers campaign,inbox (or all) to give them this one.\n',
    );
    expect(ran.stdout).not.toContain(OLD_KEY);
    expect(ran.stdout).not.toContain(NEW_KEY);
  });

  it('another address too, and one server alone', async () => {
    expect((await run('codex', 'contact,campaign', OLD_KEY)).code).toBe(0);
    const ran = await run('codex', 'contact', NEW_KEY, 'https://eu.example.com');
    expect(ran.stdout).toContain(
      'engage-campaign keeps another ENGAGE_API_KEY and ENGAGE_BASE_URL than this run wrote; run again with --servers campaign (or all) to give it this one.',
    );
  });

  it('VS Code, whose entries name one input for the key: the address only', async () => {
    expect((await setupWith(home.dir, ['--host', 'vscode', '--servers', 'contact,campaign', '--base-url', 'https://api.example.com', '--yes'], '')).code).toBe(
      0,
    );
    const ran = await setupWith(home.dir, ['--host', 'vscode', '--servers', 'contact', '--base-url', 'https://eu.example.com', '--yes'], '');
    expect(ran.stdout).toContain('engage-campaign keeps another ENGAGE_BASE_URL than this run wrote');
  });

  it('the same key and address: nothing said', async () => {
    expect((await run('cursor', 'contact,campaign', OLD_KEY)).code).toBe(0);
    const ran = await run('cursor', 'contact', OLD_KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).not.toContain('Not part of this run');
  });
});
