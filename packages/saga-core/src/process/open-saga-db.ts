import { createDb, type DbOptions, type SagaDb } from '../db/connect.js';
import { assertSchemaVersion } from '../db/migrate.js';
import type { BaseConfig } from '../config.js';

/**
 * What every service does first: open its pool on the saga schema and refuse to go on against a schema
 * version this build does not know (`SchemaVersionMismatchError`, which the entry point reports and exits
 * on). `dbOptions` is returned too, for roles that open a dedicated LISTEN connection with the same settings.
 */
export async function openSagaDb(
  config: Pick<BaseConfig, 'DATABASE_URL' | 'SAGA_DB_SCHEMA'>,
  role: string,
  poolSize: number,
): Promise<{ readonly db: SagaDb; readonly dbOptions: DbOptions }> {
  const dbOptions: DbOptions = {
    url: config.DATABASE_URL,
    schema: config.SAGA_DB_SCHEMA,
    poolSize,
    applicationName: `agent-saga-${role}`,
  };
  const db = createDb(dbOptions);
  try {
    await assertSchemaVersion(db);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return { db, dbOptions };
}
