import {
  Migrator,
  sql,
  type DatabaseIntrospector,
  type Migration,
  type MigrationResult,
  type MigrationResultSet,
  type TableMetadata,
} from 'kysely';
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
  const { error, results } = await listMigrator(db, schema, list).migrateToLatest();
  if (!error) return results ?? [];
  throw error instanceof Error ? error : new Error(`${list.owner} migration failed`, { cause: error });
}

/** Kysely's migrator of one list's migrations in `schema`, with its bookkeeping tables' names. */
function listMigrator(db: SagaDb, schema: string, list: MigrationList): Migrator {
  return new Migrator({
    db: withIntrospectionOf(db, schema),
    provider: { getMigrations: () => Promise.resolve({ ...list.migrations }) },
    migrationTableName: list.table,
    migrationLockTableName: `${list.table}_lock`,
    migrationTableSchema: schema,
  });
}

/**
 * Moves `schema` (already created) to core's migration `target`, up or down (kysely's `migrateTo`): for
 * tests of a migration, its data before and after, and its `down`. Deployments only go forward
 * ({@link migrateToLatest}).
 */
export function migrateCoreTo(db: SagaDb, schema: string, target: string): Promise<MigrationResultSet> {
  if (!SCHEMA_NAME.test(schema)) throw new RangeError(`invalid schema name ${JSON.stringify(schema)}`);
  return listMigrator(db, schema, CORE_MIGRATIONS).migrateTo(target);
}

/**
 * Kysely's migrator asks whether its bookkeeping tables exist by introspecting every table of every schema
 * (columns, defaults and serial sequences included). On a database shared by several deployments (or test
 * files) that query races with their DDL: a schema dropped or a column renamed elsewhere during the scan fails
 * it (3F000, 42703), though nothing of ours changed. The migrator is handed the same `db` whose introspection
 * sees only the tables of the schema being migrated, one catalogue query of `pg_class` by namespace.
 */
function withIntrospectionOf(db: SagaDb, schema: string): SagaDb {
  const getTables = async (): Promise<TableMetadata[]> => {
    const found = await sql<{ name: string; is_view: boolean }>`
      SELECT c.relname AS name, c.relkind IN ('v', 'm') AS is_view
        FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ${schema} AND c.relkind IN ('r', 'p', 'v', 'm')`.execute(db);
    return found.rows.map((t) => ({ name: t.name, schema, isView: t.is_view, columns: [] }));
  };
  const introspection: DatabaseIntrospector = {
    getSchemas: () => Promise.resolve([{ name: schema }]),
    getTables,
    getMetadata: async () => ({ tables: await getTables() }),
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, property, target);
      // Kysely keeps its state in private fields: its methods must run on the instance, not the proxy.
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
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
