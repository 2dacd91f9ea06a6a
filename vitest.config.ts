import { availableParallelism } from 'node:os';
import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Workspace packages export their sources under this condition (see tsconfig's customConditions),
// so the tests run what is in src/, not a build.
// Not `module`: a package's build for bundlers (OpenTelemetry's imports files without their extensions)
// would be handed to Node, which cannot load it; Node's own conditions pick what Node runs.
const conditions = ['@engage-mcp/source', ...defaultServerConditions.filter((condition) => condition !== 'module')];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['test/**/*.test.ts'],
    // Two files at a time even on two cores (vitest's default there is one): most files wait on
    // child processes, sockets and a browser more than they compute. The limits leave the slowest
    // tests (a redactor property test, the packers) twice their time under that load.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Snapshots are the contract of each tool's definition: never written silently in CI.
    update: false,
  },
});
