import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Workspace packages export their sources under this condition (see tsconfig's customConditions),
// so the tests run what is in src/, not a build.
// Not `module`: a package's build for bundlers (OpenTelemetry's imports files without their extensions)
// would be handed to Node, which cannot load it; Node's own conditions pick what Node runs.
const conditions = ['@engage-mcp/source', ...defaultServerConditions.filter((condition) => condition !== 'module')];

// A file that replaces a module (vi.mock), or says it leaves a module's state where no other file
// may meet it (forwardNow moved years ahead: that clock never goes back), needs modules of its own;
// every other file shares its worker's, so the SDKs, zod and the helpers load once per worker rather
// than once per file (most of a file's start: about 0.8 s, for the v1 SDK's client alone).
const TESTS = 'test';
const replacesModules = /\bvi\.(?:mock|doMock|hoisted)\(|^\/\/ vitest: modules of its own/m;
const isolated = readdirSync(TESTS, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts') && replacesModules.test(readFileSync(`${TESTS}/${file}`, 'utf8')))
  .map((file) => `${TESTS}/${file}`);

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    // Two files at a time even on two cores (vitest's default there is one): most files wait on
    // child processes, sockets and a browser more than they compute. The limits leave the slowest
    // tests (a redactor property test, the packers) twice their time under that load.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Snapshots are the contract of each tool's definition: never written silently in CI.
    update: false,
    projects: [
      { extends: true, test: { name: 'shared', include: [`${TESTS}/**/*.test.ts`], exclude: isolated, isolate: false } },
      { extends: true, test: { name: 'isolated', include: isolated, isolate: true } },
    ],
  },
});
