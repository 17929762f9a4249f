import { Migrator, sql, type Migration, type MigrationResult } from 'kysely';
import { SCHEMA_NAME, type SagaDb } from './connect.js';
import { EXPECTED_SCHEMA_VERSION, MIGRATIONS } from './migrations/index.js';
import { SchemaVersionMismatchError } from '../errors/errors.js';

const MIGRATION_TABLE = 'saga_migration';

/**
 * One owner's numbered, append-only migrations, recorded in a bookkeeping table of their own in the
 * deployment's schema (Kysely's `<table>` and `<table>_lock`). Core's list creates the saga log; a package
 * that owns tables of its own (the connectors' `email_drafts`) keeps its own list, so that its schema changes
 * never become core's migrations. `agent-saga migrate` runs core's list first, then the others.
 */
export interface MigrationList {
  /** Who owns the tables (`core`, `connectors`): names the list in the CLI's output. */
  readonly owner: string;
  /** The list's bookkeeping table, in the deployment's schema. */
  readonly table: string;
  /** Name → migration, in order; the last name is the list's version. */
  readonly migrations: Readonly<Record<string, Migration>>;
}

/** Core's migrations: the saga log (`saga_migration`, whose last row is the schema version). */
export const CORE_MIGRATIONS: MigrationList = Object.freeze({
  owner: 'core',
  table: MIGRATION_TABLE,
  migrations: MIGRATIONS,
});

/**
 * Runs core's pending migrations. Kysely's Postgres adapter takes `pg_advisory_xact_lock` and runs them in
 * one transaction, so several processes migrating at once serialise instead of racing. An explicit step
 * (`agent-saga migrate`), never done on a worker's boot.
 */
export async function migrateToLatest(db: SagaDb, schema: string): Promise<readonly MigrationResult[]> {
  return migrateListToLatest(db, schema, CORE_MIGRATIONS);
}

/** Runs one list's pending migrations into `schema`, as {@link migrateToLatest} does core's. */
export async function migrateListToLatest(
  db: SagaDb,
  schema: string,
  list: MigrationList,
): Promise<readonly MigrationResult[]> {
  if (!SCHEMA_NAME.test(schema)) throw new RangeError(`invalid schema name ${JSON.stringify(schema)}`);
  // CREATE SCHEMA IF NOT EXISTS races with itself; the advisory lock makes concurrent migrators take turns.
  await db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`agent-saga:migrate:${schema}`}))`.execute(trx);
    await sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(schema)}`.execute(trx);
  });
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve({ ...list.migrations }) },
    migrationTableName: list.table,
    migrationLockTableName: `${list.table}_lock`,
    migrationTableSchema: schema,
  });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return results ?? [];
    if (attempt < 5 && isOtherSchemaDropped(error, schema)) continue;
    throw error instanceof Error ? error : new Error(`${list.owner} migration failed`, { cause: error });
  }
}

/**
 * Kysely's migrator checks for its tables by introspecting every schema of the database. When another
 * deployment (or test file) drops its own schema during that query, Postgres answers 3F000 naming that
 * other schema; nothing of ours happened, and the whole migration (one transaction) can simply run again.
 */
function isOtherSchemaDropped(error: unknown, schema: string): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return e?.code === '3F000' && typeof e.message === 'string' && !e.message.includes(`"${schema}"`);
}

/** The last migration applied, or null on an unmigrated schema. */
export async function currentSchemaVersion(db: SagaDb): Promise<string | null> {
  const exists = await sql<{ t: string | null }>`SELECT to_regclass(${MIGRATION_TABLE})::text AS t`.execute(
    db,
  );
  if (!exists.rows[0]?.t) return null;
  const row = await sql<{
    name: string;
  }>`SELECT name FROM ${sql.table(MIGRATION_TABLE)} ORDER BY name DESC LIMIT 1`.execute(db);
  return row.rows[0]?.name ?? null;
}

/** Refuses to run against a schema this build does not know (older or newer). */
export async function assertSchemaVersion(db: SagaDb): Promise<void> {
  const found = await currentSchemaVersion(db);
  if (found !== EXPECTED_SCHEMA_VERSION) throw new SchemaVersionMismatchError(EXPECTED_SCHEMA_VERSION, found);
}
