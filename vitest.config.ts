import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Snapshots are the contract of each tool's definition: never written silently in CI.
    update: false,
  },
});
