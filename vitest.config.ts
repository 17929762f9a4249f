import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { defineConfig } from 'vitest/config';

/** `.env` (written by `pnpm bootstrap`) fills in what the environment does not already set. */
const dotenv = existsSync('.env') ? parseEnv(readFileSync('.env', 'utf8')) : {};
const env = Object.fromEntries(
  Object.entries(dotenv).filter(([k]) => process.env[k] === undefined),
) as Record<string, string>;

/**
 * One vitest run covers every package. Each test file isolates itself in its own Postgres schema and
 * BullMQ prefix (see `@agent-saga/core/testing`), so files may run in parallel.
 */
export default defineConfig({
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'services/*/test/**/*.test.ts',
      'tools/*/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    env,
    // Builds once, then every role a test starts runs compiled (test/build-once.ts).
    globalSetup: ['test/build-once.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
  },
});
