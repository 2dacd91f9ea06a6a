// Other people's code in what we publish: every server's bundles carry zod, undici and dotenv (MIT,
// BSD-2-Clause), the MCP SDK and OpenTelemetry (Apache-2.0), and the setup command's carries dotenv.
// Those licences ask that their text travel with each copy, and the tarballs and .mcpb bundles held
// only this project's LICENSE (and two comments esbuild kept). After `npm run build`.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stageBundles } from '../scripts/bundle.js';
import { ROOT } from '../scripts/distribution.js';
import { packAll, type PackedPackage } from '../scripts/pack.js';

const run = promisify(execFile);
const NOTICES = 'dist/third-party-licenses.LEGAL.txt';

let work: string;
let packed: PackedPackage[];
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'engage-licenses-'));
  packed = await packAll(join(work, 'tarballs'));
}, 60_000);
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** A bundled package's name@version and its LICENSE as it ships it (from the checkout's node_modules). */
function shipped(name: string): { id: string; licence: string } {
  const dir = join(ROOT, 'node_modules', name);
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
  return { id: `${name}@${version}`, licence: readFileSync(join(dir, 'LICENSE'), 'utf8').trim() };
}

async function fileInTarball(entry: PackedPackage, path: string): Promise<string> {
  expect(entry.files, `${entry.name} has no ${path}`).toContain(path);
  return (await run('tar', ['-xzOf', entry.tarball, `package/${path}`], { maxBuffer: 16 * 1024 * 1024 })).stdout;
}

function expectLicences(text: string, names: string[]): void {
  for (const name of names) {
    const { id, licence } = shipped(name);
    expect(text, id).toContain(`- ${id} (`);
    expect(text, `${id}'s licence text`).toContain(licence);
  }
}

// What every server bundles (the views inline the ext-apps App; telemetry's SDK is a module of its own).
const SERVER_BUNDLES = ['zod', 'undici', 'dotenv', '@modelcontextprotocol/server', '@modelcontextprotocol/ext-apps', '@opentelemetry/sdk-trace'];

describe('the licences of the bundled packages go with them', () => {
  it('in each server tarball: every bundled package, with its licence text', async () => {
    for (const entry of packed.filter((candidate) => candidate.name !== '@engage-mcp/setup')) {
      expectLicences(await fileInTarball(entry, NOTICES), SERVER_BUNDLES);
    }
  });

  it("in the setup command's tarball: dotenv's", async () => {
    const setup = packed.find((entry) => entry.name === '@engage-mcp/setup')!;
    expectLicences(await fileInTarball(setup, NOTICES), ['dotenv']);
  });

  it('in each .mcpb bundle, beside the server', async () => {
    for (const bundle of await stageBundles(join(work, 'bundles'))) {
      expectLicences(readFileSync(join(bundle.dir, 'server', 'third-party-licenses.LEGAL.txt'), 'utf8'), SERVER_BUNDLES);
    }
  });
});
