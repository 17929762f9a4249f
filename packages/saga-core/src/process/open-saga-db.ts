import { setTimeout as sleep } from 'node:timers/promises';
import { createDb, type DbOptions, type SagaDb } from '../db/connect.js';
import { assertSchemaVersion } from '../db/migrate.js';
import type { BaseConfig } from './config.js';
import type { Logger } from './logger.js';
import { SchemaVersionMismatchError } from '../errors/errors.js';

/** The settings a role's Postgres connections are made from. */
export type SagaDbConfig = Pick<
  BaseConfig,
  | 'DATABASE_URL'
  | 'SAGA_DB_SCHEMA'
  | 'PG_CONNECT_TIMEOUT_MS'
  | 'PG_STATEMENT_TIMEOUT_MS'
  | 'PG_IDLE_IN_TRANSACTION_TIMEOUT_MS'
  | 'PG_APPLICATION_NAME'
  | 'PG_START_WAIT_MS'
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
    startWaitMs: config.PG_START_WAIT_MS ?? 0,
    // A terminated backend or a restarted server: pg replaces the connection, the role carries on.
    onPoolError: (err) => logger?.warn({ err }, 'idle Postgres connection lost; the pool replaces it'),
  };
}

/** Pause between two start-up attempts to reach Postgres. */
const START_RETRY_MS = 1_000;

/**
 * What every service does first: open its pool on the saga schema and refuse to go on against a schema
 * version this build does not know (`SchemaVersionMismatchError`, which the entry point reports and exits
 * on). `dbOptions` is returned too, for roles that open a dedicated LISTEN connection with the same settings.
 * Pool errors after start-up (a Postgres restart) are logged on `logger`, never fatal.
 *
 * A Postgres that cannot be reached yet (down, restarting: "the database system is starting up") is waited
 * for, retried every {@link START_RETRY_MS} for up to `PG_START_WAIT_MS`, so a role started during a restart
 * comes up with it instead of exiting; a wrong schema version is never retried.
 */
export async function openSagaDb(
  config: SagaDbConfig,
  role: string,
  poolSize: number,
  logger?: Logger,
): Promise<{ readonly db: SagaDb; readonly dbOptions: DbOptions }> {
  const dbOptions = sagaDbOptions(config, role, poolSize, logger);
  const db = createDb(dbOptions);
  const giveUpAt = Date.now() + (dbOptions.startWaitMs ?? 0);
  for (;;) {
    try {
      await assertSchemaVersion(db);
      return { db, dbOptions };
    } catch (err) {
      if (err instanceof SchemaVersionMismatchError || Date.now() >= giveUpAt) {
        await db.destroy();
        throw err;
      }
      logger?.warn({ err }, 'Postgres not reachable yet; waiting for it');
      await sleep(START_RETRY_MS);
    }
  }
}
