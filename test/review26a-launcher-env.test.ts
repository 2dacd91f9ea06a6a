// The launcher (scripts/launcher.ts) in a hostile environment: a cache folder named where mkdir
// answers ENOENT below a folder that exists (under /proc). Node's recursive mkdir retried that for
// ever at 100% CPU, before the server read its first message: the host waited on a server that
// never answered. After `npm run build` (the built bin, as a host starts it).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchServer, startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { expectToolsAndARead, PATH_WITH_NODE } from './published-helpers.js';
import { launcherScript } from './launcher-helpers.js';

// /proc/1 exists and takes no new folder: mkdir below it answers ENOENT.
const onProc = process.platform === 'linux' && existsSync('/proc/1');

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe.skipIf(!onProc)('the launcher with a cache folder under /proc', () => {
  it('cacheDirOf gives up (the cache off) instead of retrying mkdir for ever', () => {
    const script = launcherScript([
      "const { cacheDirOf } = require('./scripts/launcher.ts');",
      "console.log(JSON.stringify({ xdg: cacheDirOf({ XDG_CACHE_HOME: '/proc/1/engage-cache' }) ?? null, home: cacheDirOf() ?? null }));",
    ]);
    // The kill is only a guard so a loop fails this test instead of hanging the suite.
    const output = execFileSync(process.execPath, [script], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: '/proc/1/engage-home' },
      timeout: 15_000,
      killSignal: 'SIGKILL',
    });
    expect(JSON.parse(output)).toEqual({ xdg: null, home: null });
  }, 30_000);

  it('the built contact server, started with XDG_CACHE_HOME under /proc, lists its tools and answers a read', async () => {
    const { client, close } = await launchServer('contact', {
      PATH: PATH_WITH_NODE,
      XDG_CACHE_HOME: '/proc/1/engage-cache',
      ENGAGE_BASE_URL: sandbox.baseUrl,
      ENGAGE_API_KEY: sandbox.keys.full,
    });
    try {
      await expectToolsAndARead(client, 'contact');
    } finally {
      await close();
    }
  }, 30_000);
});
