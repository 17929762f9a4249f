import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertSchemaVersion,
  createDb,
  currentSchemaVersion,
  EXPECTED_SCHEMA_VERSION,
  migrateToLatest,
  SchemaVersionMismatchError,
  type SagaDb,
} from '@agent-saga/core';
import { EmailDraftStatus } from '@agent-saga/connectors';
import { createTestEnv, dumpSchema, migrateCoreTo, type TestEnv } from '@agent-saga/core/testing';
import { MIGRATIONS } from '../src/db/migrations/index.js';
import * as approvalStatus from '../src/review/approvals/approval-status.js';
import * as authTokenRole from '../src/auth/token-role.js';
import * as authTokenScope from '../src/auth/token-scope.js';
import * as caseAction from '../src/review/cases/case-action.js';
import * as caseStatus from '../src/review/cases/case-status.js';
import * as compensationStatus from '../src/compensations/compensation-status.js';
import * as correctionAudience from '../src/review/corrections/audience.js';
import * as correctionStatus from '../src/review/corrections/correction-status.js';
import * as runStatus from '../src/runs/run-status.js';
import * as stepEventKind from '../src/steps/step-event-kind.js';
import * as stepStatus from '../src/steps/step-status.js';
import * as toolClass from '../src/tools/tool-class.js';

/** Every status file of core, each beside the concept it belongs to. A new status file is added here. */
const statuses = {
  ...toolClass,
  ...stepStatus,
  ...stepEventKind,
  ...runStatus,
  ...compensationStatus,
  ...authTokenRole,
  ...authTokenScope,
  // Owned by the connectors (their own migration list), stored in the same schema.
  EmailDraftStatus,
  ...caseStatus,
  ...caseAction,
  ...approvalStatus,
  ...correctionStatus,
  ...correctionAudience,
};

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('migrate');
});
afterAll(async () => env?.close());

describe('migrations', () => {
  it('bring a schema to the version this build expects, and are a no-op the second time', async () => {
    expect(await currentSchemaVersion(env.db)).toBe(EXPECTED_SCHEMA_VERSION);
    expect(await migrateToLatest(env.db, env.schema)).toEqual([]);
    await expect(assertSchemaVersion(env.db)).resolves.toBeUndefined();
  });

  it('serialise when several processes migrate one fresh schema at once', async () => {
    const schema = `${env.schema}_race`;
    const dbs = [0, 1, 2].map(() => createDb({ url: env.databaseUrl, schema }));
    try {
      const results = await Promise.all(dbs.map((db) => migrateToLatest(db, schema)));
      // One migrator did all the work (every migration, once); the others found nothing left to do.
      const workers = results.filter((r) => r.some((m) => m.status === 'Success'));
      expect(workers).toHaveLength(1);
      expect(workers[0]!.at(-1)?.migrationName).toBe(EXPECTED_SCHEMA_VERSION);
      const applied = results
        .flat()
        .filter((m) => m.status === 'Success')
        .map((m) => m.migrationName);
      expect(new Set(applied).size).toBe(applied.length);
      expect(await currentSchemaVersion(dbs[0]!)).toBe(EXPECTED_SCHEMA_VERSION);
    } finally {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(dbs[0]!);
      await Promise.all(dbs.map((db) => db.destroy()));
    }
  });

  it('are not failed by other schemas changing during the migration (DDL of other deployments)', async () => {
    const schemas = [0, 1, 2].map((i) => `${env.schema}_calm${i}`);
    const churn = `${env.schema}_churn`;
    const other = createDb({ url: env.databaseUrl, schema: churn });
    const dbs = schemas.map((schema) => createDb({ url: env.databaseUrl, schema }));
    let migrating = true;
    let changes = 0;
    // Another deployment (or test file) creating, altering and dropping its tables in a loop meanwhile.
    const churning = (async () => {
      while (migrating) {
        await sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(churn)}`.execute(other);
        for (let t = 0; t < 20; t++) {
          const table = sql.id(churn, `t${t}`);
          await sql`CREATE TABLE ${table} (id serial PRIMARY KEY, budget int DEFAULT 1)`.execute(other);
          await sql`ALTER TABLE ${table} RENAME COLUMN budget TO spent`.execute(other);
        }
        await sql`DROP SCHEMA ${sql.id(churn)} CASCADE`.execute(other);
        changes++;
      }
    })();
    try {
      for (const [i, db] of dbs.entries()) {
        const results = await migrateToLatest(db, schemas[i]!);
        expect(results.at(-1)?.migrationName).toBe(EXPECTED_SCHEMA_VERSION);
        expect(await currentSchemaVersion(db)).toBe(EXPECTED_SCHEMA_VERSION);
      }
    } finally {
      migrating = false;
      await churning;
      for (const [i, db] of dbs.entries())
        await sql`DROP SCHEMA IF EXISTS ${sql.id(schemas[i]!)} CASCADE`.execute(db);
      await Promise.all([...dbs, other].map((db) => db.destroy()));
    }
    expect(changes).toBeGreaterThan(0);
  });

  it('refuse an unmigrated schema and one from a newer build, by name', async () => {
    const blank = createDb({ url: env.databaseUrl, schema: `${env.schema}_blank` });
    try {
      await expect(assertSchemaVersion(blank)).rejects.toBeInstanceOf(SchemaVersionMismatchError);
    } finally {
      await blank.destroy();
    }
    await sql`INSERT INTO saga_migration (name, timestamp) VALUES ('9999_from_the_future', now())`.execute(
      env.db,
    );
    const err = await assertSchemaVersion(env.db).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaVersionMismatchError);
    expect((err as Error).message).toContain('9999_from_the_future');
    await sql`DELETE FROM saga_migration WHERE name = '9999_from_the_future'`.execute(env.db);
  });

  it('keep one open case per step, while resolved cases stay as history', async () => {
    await sql`INSERT INTO runs (run_id, tenant_id, status) VALUES ('mc', 't', 'RUNNING')`.execute(env.db);
    const open = sql`INSERT INTO cases (run_id, step_idx, tenant_id, reason, status) VALUES ('mc', 1, 't', 'r', 'open')`;
    await open.execute(env.db);
    await expect(open.execute(env.db)).rejects.toThrow(/cases_one_open_per_step/);
    await sql`UPDATE cases SET status = 'resolved' WHERE run_id = 'mc'`.execute(env.db);
    await open.execute(env.db);
  });
});

/**
 * Every status object of core and the columns whose CHECK lists must accept exactly its values.
 * A status object that no column stores says why. A new status object fails the first test until it is
 * listed here; a new status value fails until a migration adds it to the database's list.
 */
const CHECKED_COLUMNS = {
  ToolClass: ['saga_log.tool_class'],
  StepStatus: ['saga_log.status'],
  RunStatus: ['runs.status'],
  CompensationStatus: ['saga_log.compensation_status', 'compensations.status'],
  TokenRole: ['api_tokens.role'],
  TokenScope: ['api_tokens.scope'],
  StepEventKind: ['step_event_rows.kind'],
  EmailDraftStatus: ['email_drafts.status'],
  ReviewStatus: ['cases.status'],
  ApprovalKind: ['approvals.kind'],
  ApprovalStatus: ['approvals.status'],
  CorrectionStatus: ['corrections.status'],
  /** Stored in `saga_log.audience text[]`, which has no CHECK: an unknown audience is treated as customer. */
  Audience: [],
  /** An operator's action on a case: recorded in a decision event's detail, never a column of its own. */
  CaseAction: [],
} as const satisfies Record<StatusObjectName, readonly string[]>;

/** The names of the status objects (not their subset lists). */
type StatusObjectName = {
  [K in keyof typeof statuses]: (typeof statuses)[K] extends readonly unknown[] | ((...a: never[]) => unknown)
    ? never
    : K;
}[keyof typeof statuses];
const statusObjectNames = Object.entries(statuses)
  .filter(([, v]) => typeof v === 'object' && !Array.isArray(v))
  .map(([name]) => name);
const valuesOfObject = (name: StatusObjectName): string[] =>
  Object.values((statuses as unknown as Record<string, Record<string, string>>)[name]!);

/** `'a'::text, 'b'::text` (as `pg_get_expr` prints a list) → `['a', 'b']`. */
const literals = (expr: string): string[] =>
  [...expr.matchAll(/'((?:[^']|'')*)'::text/g)].map((m) => m[1]!.replace(/''/g, "'"));

interface ListCheck {
  readonly column: string;
  readonly constraint: string;
  readonly expr: string;
}

/** Every single-column CHECK of the form `col IN (...)` in the schema, keyed `table.column`. */
async function listChecks(db: SagaDb, schema: string): Promise<Map<string, ListCheck>> {
  const r = await sql<{ tbl: string; col: string; conname: string; expr: string }>`
    SELECT t.relname AS tbl, a.attname AS col, c.conname, pg_get_expr(c.conbin, c.conrelid) AS expr
      FROM pg_constraint c
      JOIN pg_class t ON t.oid = c.conrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
     WHERE n.nspname = ${schema} AND c.contype = 'c' AND cardinality(c.conkey) = 1
       AND pg_get_expr(c.conbin, c.conrelid) LIKE '%= ANY (ARRAY[%'`.execute(db);
  return new Map(
    r.rows.map((x) => [`${x.tbl}.${x.col}`, { column: x.col, constraint: x.conname, expr: x.expr }]),
  );
}

/** Whether the constraint's own expression holds for `value` (evaluated by Postgres, not parsed). */
async function accepts(db: SagaDb, check: ListCheck, value: string): Promise<boolean> {
  // The expression comes from this schema's catalog, written by our migrations, never from input.
  const r = await sql<{ ok: boolean | null }>`
    SELECT ${sql.raw(check.expr)} AS ok FROM (SELECT ${value}::text AS ${sql.id(check.column)}) AS probe`.execute(
    db,
  );
  return r.rows[0]?.ok === true;
}

describe('the status objects and the database', () => {
  it('every status object is listed with the columns that store it', () => {
    expect(statusObjectNames.sort()).toEqual(Object.keys(CHECKED_COLUMNS).sort());
  });

  it('each CHECK list accepts exactly its status object: every value, and nothing else', async () => {
    const checks = await listChecks(env.db, env.schema);
    const claimed = new Set<string>();
    for (const [name, columns] of Object.entries(CHECKED_COLUMNS) as [
      StatusObjectName,
      readonly string[],
    ][]) {
      const values = valuesOfObject(name);
      for (const column of columns) {
        const check = checks.get(column);
        expect(check, `${column} has a CHECK list (${name})`).toBeDefined();
        claimed.add(column);
        expect(literals(check!.expr).sort(), `${check!.constraint} lists ${name}`).toEqual(
          [...values].sort(),
        );
        for (const v of values)
          expect(await accepts(env.db, check!, v), `${column} accepts '${v}'`).toBe(true);
        expect(await accepts(env.db, check!, 'NOT_A_STATUS'), `${column} refuses others`).toBe(false);
      }
    }
    // The other way round: no CHECK list in the schema is left without its status object.
    expect([...checks.keys()].filter((c) => !claimed.has(c))).toEqual([]);
  });

  it('partial indexes and trigger conditions name only statuses that exist, and the named subsets', async () => {
    const r = await sql<{ tbl: string; name: string; def: string }>`
      SELECT t.relname AS tbl, i.relname AS name, pg_get_indexdef(x.indexrelid) AS def
        FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
       WHERE n.nspname = ${env.schema} AND x.indpred IS NOT NULL
      UNION ALL
      SELECT t.relname, g.tgname, pg_get_triggerdef(g.oid)
        FROM pg_trigger g JOIN pg_class t ON t.oid = g.tgrelid JOIN pg_namespace n ON n.oid = t.relnamespace
       WHERE n.nspname = ${env.schema} AND NOT g.tgisinternal AND g.tgqual IS NOT NULL`.execute(env.db);
    const named = new Map<string, string[]>();
    for (const { tbl, name, def } of r.rows) {
      const where = def.slice(def.indexOf('WHERE'));
      for (const [object, columns] of Object.entries(CHECKED_COLUMNS) as [
        StatusObjectName,
        readonly string[],
      ][])
        for (const column of columns.filter((c) => c.startsWith(`${tbl}.`))) {
          const col = column.slice(tbl.length + 1);
          const compared = [
            ...where.matchAll(
              new RegExp(`\\b${col} = (ANY \\(ARRAY\\[[^\\]]*\\]\\)|'(?:[^']|'')*'::text)`, 'g'),
            ),
          ].flatMap((m) => literals(m[1]!));
          expect(
            compared.filter((v) => !valuesOfObject(object).includes(v)),
            `${name}: ${object}`,
          ).toEqual([]);
          if (compared.length > 0) named.set(`${name}.${col}`, compared);
        }
    }
    expect(named.get('runs_open.status')?.sort()).toEqual([...statuses.OPEN_RUN_STATUSES].sort());
    expect(named.get('saga_log_unsettled.status')?.sort()).toEqual(
      [...statuses.UNRESOLVED_STEP_STATUSES].sort(),
    );
    expect(named.get('approvals_pending.status')).toEqual([statuses.ApprovalStatus.PENDING]);
  });
});

describe('migration 0011', () => {
  it('brings a database migrated by the first 0005 (no outbox.relay_after) to the fresh schema', async () => {
    const schema = `${env.schema}_old`;
    const db = createDb({ url: env.databaseUrl, schema });
    try {
      const names = Object.keys(MIGRATIONS);
      const before0011 = names[names.indexOf('0011_align_edited_migrations') - 1]!;
      await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(db);
      expect((await migrateCoreTo(db, schema, before0011)).error).toBeUndefined();
      // The outbox as the 0005 of d562f6c left it, before relay_after was added to that file.
      await sql`ALTER TABLE outbox DROP COLUMN relay_after`.execute(db);
      await sql`INSERT INTO outbox (topic, run_id, step_idx, idempotency_key, job_id, payload)
                VALUES ('execute', 'r', 0, 'k', 'j', '{}')`.execute(db);
      expect(await dumpSchema(db, schema)).not.toBe(await dumpSchema(env.db, env.schema));

      await migrateToLatest(db, schema);
      expect(await dumpSchema(db, schema)).toBe(await dumpSchema(env.db, env.schema));
      const row = await sql<{ due: boolean }>`SELECT relay_after <= now() AS due FROM outbox`.execute(db);
      expect(row.rows).toEqual([{ due: true }]);
    } finally {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
      await db.destroy();
    }
  });
});
