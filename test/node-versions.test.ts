// The other Node releases supported (20.18.1, the oldest `engines` allows, then 22, 24 and 26, beside CI's 20; scripts/ensure-nodes.mjs
// provides them): the launcher changes V8's flags and caches V8's code, both of which differ by
// release, so its cache is made and used there too, and the built servers serve over stdio (v1
// client) and remote mode (v2 client, a confirmed write carried out once).
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ModernClient, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverEntry, startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, MODERN_REVISION, structuredOf, textOf } from './helpers.js';
import { bundle, launcherScript, printWhenWritten } from './launcher-helpers.js';

interface OtherNode {
  path: string;
  version: string;
}

/** The binaries ensure-nodes.mjs listed (npm test runs it first); none when ENGAGE_TEST_NODES=none. */
function otherNodes(): OtherNode[] {
  const list = fileURLToPath(new URL('../node_modules/.cache/engage-nodes/nodes.json', import.meta.url));
  if (!existsSync(list)) throw new Error('No list of Node binaries to test on: run `node scripts/ensure-nodes.mjs` first (npm test does).');
  return (JSON.parse(readFileSync(list, 'utf8')) as OtherNode[]).filter((node) => node.version !== process.version);
}

const nodes = otherNodes();

/** The launcher in a process of its own, built once and run by each Node (argv: the bundle, then its cache folder). */
const harnesses = {
  cache: '',
  flags: '',
  started: '',
};
beforeAll(() => {
  // Starts the bundle and prints what became of its cache.
  harnesses.cache = launcherScript([
    "const { launch } = require('./scripts/launcher.ts');",
    'const [file, cacheDir] = process.argv.slice(2);',
    "const launched = launch({ file, name: 'contact', buildId: 'build1', cacheDir, writeAfterMs: 0 });",
    ...printWhenWritten('{ cache: launched.cache, written, lazy: globalThis.__engageLazy }'),
  ]);
  // Whether the start held the optimizer (the flags' hash moved), and whether the end of the start gave the flags back.
  harnesses.flags = launcherScript([
    "const { cachedDataVersionTag } = require('node:v8');",
    "const { launch } = require('./scripts/launcher.ts');",
    "const { endOfStart } = require('./shared/src/mcp/end-of-start.ts');",
    'const before = cachedDataVersionTag();',
    "launch({ file: process.argv[2], name: 'contact', buildId: 'build1', cacheDir: undefined, writeAfterMs: 60000 });",
    'const held = cachedDataVersionTag();',
    'endOfStart();',
    'console.log(JSON.stringify({ held: held !== before, restored: cachedDataVersionTag() === before }));',
    'process.exit(0);',
  ]);
  // Starts the bundle: it ran.
  harnesses.started = launcherScript([
    "const { launch } = require('./scripts/launcher.ts');",
    "const launched = launch({ file: process.argv[2], name: 'contact', buildId: 'build1', cacheDir: process.argv[3], writeAfterMs: 0 });",
    ...printWhenWritten('{ lazy: globalThis.__engageLazy }'),
  ]);
});

const majorOf = (node: OtherNode) => Number.parseInt(node.version.slice(1), 10);
/** Whether the launcher holds the optimizer on this Node (up to 22). */
const holdsOn = (node: OtherNode) => majorOf(node) < 24;

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox?.close());

it('runs on at least one other Node release unless told not to', () => {
  if (process.env.ENGAGE_TEST_NODES !== 'none') expect(nodes.length).toBeGreaterThan(0);
});

describe.each(nodes)('on Node $version', (node) => {
  it('the launcher writes a cache after the first start, and the next start uses it', () => {
    const b = bundle();
    const start = () => JSON.parse(execFileSync(node.path, [harnesses.cache, b.file, b.cacheDir], { encoding: 'utf8' })) as unknown;
    expect(start()).toEqual({ cache: 'none', written: true, lazy: 42 });
    expect(readdirSync(b.cacheDir)).toEqual([expect.stringContaining(`_${node.version}_`)]);
    expect(start()).toEqual({ cache: 'used', written: false, lazy: 42 });
  });

  // Held on Node 22 (TurboFan optimizes during a start there); not from 24 (V8 13), where Maglev does that work.
  it("the optimizer is held on Node 22, not from 24; its release gives back the start's V8 flags whole (their hash)", () => {
    const output = execFileSync(node.path, [harnesses.flags, bundle().file], { encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual({ held: holdsOn(node), restored: true });
  });

  it('the built contact server answers over stdio (v1 client), writes its code cache, and its next start uses it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'engage-node-versions-'));
    const cacheDir = join(home, 'engage-mcp', 'code-cache');
    await withServer(node.path, home, async (client) => {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['contact_read', 'contact_action']);
      const read = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', limit: 2 } });
      expect(read.isError, textOf(read as never)).toBeFalsy();
      expect((structuredOf(read as never).data as unknown[]).length).toBe(2);
      // The launcher writes it a second after the start, under the flags the start had.
      await expect
        .poll(() => (existsSync(cacheDir) ? readdirSync(cacheDir) : []), { timeout: 15_000, interval: 100 })
        .toEqual([expect.stringMatching(new RegExp(`^contact_.*_${node.version}_.*\\.bin$`))]);
    });
    const file = join(cacheDir, readdirSync(cacheDir)[0] as string);
    // A cache used is touched in place (its time, set back an hour here so that a file system
    // with one-second times tells the touch apart); one V8 refused would be written anew (another file).
    const hourAgo = new Date(Date.now() - 60 * 60 * 1000);
    utimesSync(file, hourAgo, hourAgo);
    const written = statSync(file);
    await withServer(node.path, home, async (client) => {
      await client.listTools();
      await expect.poll(() => statSync(file).mtimeMs, { timeout: 15_000, interval: 100 }).toBeGreaterThan(written.mtimeMs);
      expect(statSync(file).ino).toBe(written.ino);
      expect(readdirSync(cacheDir)).toEqual([basename(file)]);
    });
  });

  it("a user's flags that forbid changing V8's flags are left alone: the bundle starts", () => {
    // V8 aborts on any flag change with frozen flags (V8 takes one dash too), and on --no-turbofan beside the other in V8 12.4.
    // Both exist in Node 22's V8, where the launcher holds the optimizer; Node 20's has no Maglev
    // flags, and later ones may drop them.
    for (const flag of ['--freeze-flags-after-init', '--always-osr-from-maglev', '-freeze-flags-after-init']) {
      const known = spawnSync(node.path, [flag, '-e', '0']).status === 0;
      if (majorOf(node) === 22) expect(known, flag).toBe(true);
      if (!known) continue;
      const b = bundle();
      expect(JSON.parse(execFileSync(node.path, [flag, harnesses.started, b.file, b.cacheDir], { encoding: 'utf8' }))).toEqual({ lazy: 42 });
    }
  });

  it('remote mode serves a 2026-07-28 client a read and a confirmed write, carried out once', async () => {
    const service = await startService(node.path);
    const client = new ModernClient({ name: 'node-versions', version: '0' }, { versionNegotiation: { mode: { pin: MODERN_REVISION } } } as never);
    try {
      await client.connect(
        new V2HttpTransport(new URL('/mcp/channel', service.url), { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } }),
      );
      const send = (args: Record<string, unknown>) =>
        client.callTool({
          name: 'channel_action',
          arguments: { operationId: 'channel.whatsapp.send', params: { msisdn: '081234567890', message: 'Halo' }, ...args },
        });
      const before = countCarriedOut(sandbox, 'channel.whatsapp.send');
      const preview = await send({});
      expect(structuredOf(preview as never).outcome).toBe('preview');
      const token = structuredOf(preview as never).confirmationToken as string;
      expect((await send({ confirmationToken: token })).isError).toBeFalsy();
      expect(textOf((await send({ confirmationToken: token })) as never)).toMatch(/already used/);
      expect(countCarriedOut(sandbox, 'channel.whatsapp.send')).toBe(before + 1);
    } finally {
      await client.close();
      await stop(service.child);
    }
  });
});

/** The built contact server on `nodePath` over stdio with the v1 client, `home` its XDG_CACHE_HOME. */
async function withServer(nodePath: string, home: string, use: (client: Client) => Promise<void>): Promise<void> {
  const client = new Client({ name: 'node-versions', version: '0' });
  const transport = new StdioClientTransport({
    command: nodePath,
    args: [serverEntry('contact')],
    env: { PATH: process.env.PATH ?? '', ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, XDG_CACHE_HOME: home },
    stderr: 'pipe',
  });
  try {
    await client.connect(transport);
    await use(client);
  } finally {
    await client.close();
  }
}

/** The built service on `nodePath`, once it prints its address; killed if it does not within 15 s. */
async function startService(nodePath: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(nodePath, ['packages/http/dist/cli.js'], {
    env: { PATH: process.env.PATH ?? '', ENGAGE_HTTP_PORT: '0', ENGAGE_BASE_URL: sandbox.baseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  try {
    const url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`the service did not start within 15 s: ${stderr.join('')}`)), 15_000);
      lines.once('line', (line) => {
        clearTimeout(timer);
        try {
          resolveUrl((JSON.parse(line) as { url: string }).url);
        } catch {
          reject(new Error(`the service's first line is not its address: ${line}`));
        }
      });
      child.once('exit', (code) => reject(new Error(`the service exited with ${code}: ${stderr.join('')}`)));
    });
    return { url, child };
  } catch (error) {
    await stop(child);
    throw error;
  } finally {
    lines.close();
  }
}

/** SIGTERM (the service drains), then SIGKILL if it has not exited within 10 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
  child.kill('SIGTERM');
  const late = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(late);
}
