// The launcher (the demo, the end-to-end tests, the bench) gives the servers it starts a temporary
// state directory of their own, never the user's. It was left behind: each `npm start` and each
// test process left a folder holding an audit secret in the system's temporary folder (hundreds on
// a machine that ran the suite). Found by review32-newcomer. It is now removed when the launching
// process exits, and none is made for servers given a state directory.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';

let sandbox: Sandbox;
const root = mkdtempSync(join(tmpdir(), 'launch-state-'));
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Runs a process that launches the contact server (its TMPDIR a folder of its own), lists its tools and exits; what it left there. */
function leftBy(env: Record<string, string>): string[] {
  const tmp = mkdtempSync(join(root, 'tmp-'));
  const launcher = new URL('../packages/sandbox/src/launch.ts', import.meta.url).pathname;
  const script = `import { launchServer } from ${JSON.stringify(launcher)};
const server = await launchServer('contact', ${JSON.stringify({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ...env })});
const { tools } = await server.client.listTools();
if (tools.length !== 2) throw new Error('no tools');
await server.close();`;
  execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env: { ...process.env, TMPDIR: tmp }, stdio: 'pipe' });
  return readdirSync(tmp).filter((name) => name.startsWith('engage-mcp-state-'));
}

it('removes the state directory it made when the launching process exits', () => {
  expect(leftBy({})).toEqual([]);
});

it('makes none for a server given a state directory of its own', () => {
  const own = mkdtempSync(join(root, 'own-'));
  expect(leftBy({ ENGAGE_STATE_DIR: own })).toEqual([]);
});
