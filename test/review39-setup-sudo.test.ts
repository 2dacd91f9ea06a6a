// Review 39, `sudo npx @engage-mcp/setup` where sudo sets HOME to root's (Linux's default): setup
// wrote /root/.cursor/mcp.json, said "Wrote …" and "Restart Cursor", and the person's Cursor, run
// as themselves, showed no server. Now the run says the file is in root's home and the person's
// host does not read it, and to run again without sudo. Where sudo keeps HOME (macOS), the file is
// the person's own and nothing is said. Only root runs as root, so these run only there.
import { chown } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { homePerTest, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review39-sudo-');
const KEY = 'eng_live_39e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9';
const BY_SUDO = { SUDO_USER: 'alice', SUDO_UID: '4242', SUDO_GID: '4242' };

describe.skipIf(process.getuid?.() !== 0)('setup run by sudo', () => {
  it("in root's home: says the person's host does not read it", async () => {
    const ran = await setupWithKey(home.dir, 'cursor', KEY, BY_SUDO);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(
      `Run with sudo:\n  setup ran as root by sudo, so it wrote the Cursor config in root's home (${home.dir}); alice's own Cursor does not read it. If it was meant for alice, run setup again without sudo.\n`,
    );
  });

  it("in the person's home (sudo kept HOME): nothing said", async () => {
    await chown(home.dir, 4242, 4242);
    const ran = await setupWithKey(home.dir, 'cursor', KEY, BY_SUDO);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).not.toContain('Run with sudo');
  });
});
