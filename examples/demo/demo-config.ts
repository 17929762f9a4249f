import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** The repository root: every child process runs here, and entry points are resolved from it. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const demoEnvSchema = z.object({
  DATABASE_URL: z.url({ error: 'DATABASE_URL is needed: run `pnpm bootstrap` first (it writes .env)' }),
  REDIS_URL: z.url({ error: 'REDIS_URL is needed: run `pnpm bootstrap` first (it writes .env)' }),
  /**
   * The demo's own Postgres schema, dropped and re-migrated at start and dropped at the end. Another name
   * lets two demos (a person's and the test's) share one database.
   */
  DEMO_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/)
    .default('saga_demo'),
});

/** What the demo reads from its environment, once, at start. */
export interface DemoConfig {
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly schema: string;
  /** A BullMQ prefix of this demo alone, so queues of other deployments on the same Redis are untouched. */
  readonly queuePrefix: string;
}

/**
 * Parses the environment, with `.env` (written by `pnpm bootstrap`) filling in what is not already set.
 * Throws naming the variable when one is missing or malformed.
 */
export function loadDemoConfig(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const dotenv = resolve(REPO_ROOT, '.env');
  if (existsSync(dotenv)) process.loadEnvFile(dotenv); // keeps variables that are already set
  const parsed = demoEnvSchema.safeParse(env);
  if (!parsed.success)
    throw new Error(
      `invalid demo environment: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return Object.freeze({
    databaseUrl: parsed.data.DATABASE_URL,
    redisUrl: parsed.data.REDIS_URL,
    schema: parsed.data.DEMO_DB_SCHEMA,
    queuePrefix: `demo-${process.pid}-${Date.now()}`,
  });
}
