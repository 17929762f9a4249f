import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { installPreparedStatements } from './prepared-statements.js';
import type { Database } from './schema.js';

export type SagaDb = Kysely<Database>;
export type SagaTrx = Transaction<Database>;

/** A Postgres schema name we are willing to put on a connection's search_path. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface DbOptions {
  readonly url: string;
  /** The Postgres schema that holds the saga log (one per deployment, or per test file). */
  readonly schema: string;
  readonly poolSize?: number;
  readonly applicationName?: string;
}

/** pg connection settings that put the saga schema first on the search path. */
export function pgConnectionConfig(opts: DbOptions): pg.PoolConfig {
  if (!SCHEMA_NAME.test(opts.schema))
    throw new RangeError(`invalid schema name ${JSON.stringify(opts.schema)}`);
  return {
    connectionString: opts.url,
    max: opts.poolSize ?? 10,
    application_name: opts.applicationName ?? 'agent-saga',
    options: `-c search_path=${opts.schema}`,
  };
}

// Postgres BIGINT (int8) ids arrive as strings; keep them so (no precision loss), but parse timestamps.
export function createDb(opts: DbOptions): SagaDb {
  const pool = new pg.Pool(pgConnectionConfig(opts));
  installPreparedStatements(pool);
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** The NOTIFY channel on which a settled step announces its key. Channels are per database; the schema
 * name keeps deployments (and test files) that share a database apart. */
export function stepSettledChannel(schema: string): string {
  return `saga_step_settled_${schema}`;
}

/** The NOTIFY channel that wakes outbox relays when a message is committed. */
export function outboxChannel(schema: string): string {
  return `saga_outbox_${schema}`;
}
