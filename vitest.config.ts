import { defineConfig } from 'vitest/config';

/**
 * One vitest run covers every package. Each test file isolates itself in its own Postgres schema and
 * BullMQ prefix (see `@agent-saga/core/testing`), so files may run in parallel.
 */
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
  },
});
