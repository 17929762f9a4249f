import { baseConfigSchema, createDb, parseConfig, type SagaDb } from '@agent-saga/core';
import type { CliIo } from './cli-io.js';

/**
 * The settings of commands that only talk to the saga log: DATABASE_URL and SAGA_DB_SCHEMA, parsed with
 * core's own rules. The CLI needs no Redis, so REDIS_URL is not required here.
 */
export const databaseConfigSchema = baseConfigSchema.pick({ DATABASE_URL: true, SAGA_DB_SCHEMA: true });
export type DatabaseConfig = Readonly<{ DATABASE_URL: string; SAGA_DB_SCHEMA: string }>;

export function parseDatabaseConfig(io: CliIo): DatabaseConfig {
  return parseConfig(databaseConfigSchema, io.env);
}

/**
 * Opens the saga log for one command and closes it afterwards, whatever happened. A small pool: a CLI
 * command runs a handful of statements.
 */
export async function withDatabase<T>(
  config: DatabaseConfig,
  work: (db: SagaDb, schema: string) => Promise<T>,
): Promise<T> {
  const db = createDb({
    url: config.DATABASE_URL,
    schema: config.SAGA_DB_SCHEMA,
    poolSize: 2,
    applicationName: 'agent-saga-cli',
    // No statement bound: a person runs these commands and can interrupt them, and `migrate` may build an
    // index on a large log for longer than any bound a role's statements get.
    statementTimeoutMs: 0,
  });
  try {
    return await work(db, config.SAGA_DB_SCHEMA);
  } finally {
    await db.destroy();
  }
}
