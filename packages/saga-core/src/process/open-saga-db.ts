import { createDb, type DbOptions, type SagaDb } from '../db/connect.js';
import { assertSchemaVersion } from '../db/migrate.js';
import type { BaseConfig } from '../config.js';
import type { Logger } from '../logger.js';

/** The settings a role's Postgres connections are made from. */
export type SagaDbConfig = Pick<
  BaseConfig,
  | 'DATABASE_URL'
  | 'SAGA_DB_SCHEMA'
  | 'PG_CONNECT_TIMEOUT_MS'
  | 'PG_STATEMENT_TIMEOUT_MS'
  | 'PG_IDLE_IN_TRANSACTION_TIMEOUT_MS'
  | 'PG_APPLICATION_NAME'
>;

/**
 * The connection options of `role` from the shared config: its schema, its bounded waits, and the
 * `application_name` `<PG_APPLICATION_NAME>-<role>` under which its sessions show in `pg_stat_activity`.
 * The API's and the relay's LISTEN sessions are opened from these too, so they get the same bounds.
 */
export function sagaDbOptions(
  config: SagaDbConfig,
  role: string,
  poolSize: number,
  logger?: Logger,
): DbOptions {
  return {
    url: config.DATABASE_URL,
    schema: config.SAGA_DB_SCHEMA,
    poolSize,
    applicationName: `${config.PG_APPLICATION_NAME}-${role}`,
    connectTimeoutMs: config.PG_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: config.PG_STATEMENT_TIMEOUT_MS,
    idleInTransactionTimeoutMs: config.PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    // A terminated backend or a restarted server: pg replaces the connection, the role carries on.
    onPoolError: (err) => logger?.warn({ err }, 'idle Postgres connection lost; the pool replaces it'),
  };
}

/**
 * What every service does first: open its pool on the saga schema and refuse to go on against a schema
 * version this build does not know (`SchemaVersionMismatchError`, which the entry point reports and exits
 * on). `dbOptions` is returned too, for roles that open a dedicated LISTEN connection with the same settings.
 * Pool errors after start-up (a Postgres restart) are logged on `logger`, never fatal.
 */
export async function openSagaDb(
  config: SagaDbConfig,
  role: string,
  poolSize: number,
  logger?: Logger,
): Promise<{ readonly db: SagaDb; readonly dbOptions: DbOptions }> {
  const dbOptions = sagaDbOptions(config, role, poolSize, logger);
  const db = createDb(dbOptions);
  try {
    await assertSchemaVersion(db);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return { db, dbOptions };
}
