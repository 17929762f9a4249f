import { sql, type Kysely } from 'kysely';

/**
 * `saga_log`'s columns reordered so that the columns a step's claim and outcome write come last, together:
 * each new version of the row then goes to the WAL as little more than the bytes that changed.
 *
 * Why the order matters: when an UPDATE leaves the new version on the same page as the old (the table's
 * fillfactor 70 keeps room for that, migration 0010), Postgres logs only what lies between the longest
 * common prefix and the longest common suffix of the two versions' data. With the columns in the order
 * the migrations added them, the outcome's first changed column (`status`) came tenth and its last
 * (`updated_at`) twenty-fifth, and between them sat the compensation, the correction, the audience, the
 * dependencies and the creation time, written once at intake and logged again with every version. Measured
 * with pg_walinspect on rows of the bench's shape, each inserted and then settled as the executor does,
 * five rows apart: 338 bytes per outcome record in the old order, 128 in this one. A call writes one such
 * version inline (the outcome, delivered in the same statement) and up to three through the executor (the
 * claim, the outcome, the delivered mark). In the bench's sustained phase (inline, pg_walinspect) the
 * outcome's records averaged 419 bytes before and 286 after: a version that finds no room on its page is
 * logged whole either way.
 *
 * The order, in three groups:
 * 1. written once, at intake (the step's identity, its call and what undoes it), then the creation time;
 * 2. written on the recovery and review paths (the approval, the compensation's status, the reconciler's
 *    lease and schedule), rarely;
 * 3. written by the claim and by the outcome: `status` first and `updated_at` last, so the outcome's
 *    changed bytes start at `status` and the claim's at `attempts`; the delivered mark changes only the
 *    last two.
 *
 * How: Postgres cannot move a column, so the table is rebuilt. The new table's column types, NOT NULLs and
 * defaults, and every constraint, index and trigger of the old one (and the foreign keys of other tables
 * that reference it) are read from the catalogue and made again under the same names, so the rebuilt table
 * is the old one with its columns in a new order (`test/schema/migrated-schema.txt` shows exactly that
 * diff). The copy runs before the triggers exist: the capture-check counts are already right and must not
 * count the copied rows again.
 *
 * What it costs a deployment: the rebuild rewrites every row under an exclusive lock, in the migration's
 * transaction, so it takes as long as copying the log (measured: 6.1 s for a million settled steps on the
 * bench's two cores, every row the same before and after); prune old runs first (`saga prune`) to shorten it. A process still running the previous build
 * is refused by the schema version check, so no prepared statement meets the changed row shape.
 */
/** The step's identity, first in both orders. */
const IDENTITY = [
  'run_id',
  'step_idx',
  'tenant_id',
  'tool',
  'tool_class',
  'tool_version',
  'idempotency_key',
] as const;

const ORDER = [
  // 1. Written once, at intake.
  ...IDENTITY,
  'payload_hash',
  'step_id',
  'trace_id',
  'span_id',
  'args',
  'compensation',
  'correction',
  'audience',
  'depends_on',
  'created_at',
  // 2. Written on the recovery and review paths.
  'approval_id',
  'compensation_status',
  'reconcile_attempts',
  'next_reconcile_at',
  'reconcile_lease_until',
  'reconcile_lease_owner',
  // 3. Written by the claim and by the outcome.
  'status',
  'external_ref',
  'result',
  'error',
  'attempts',
  'last_attempt_at',
  'lease_until',
  'lease_owner',
  'outcome_delivered',
  'updated_at',
] as const;

/** The order the migrations up to 0020 left, for `down`. */
const ORDER_BEFORE = [
  ...IDENTITY,
  'args',
  'payload_hash',
  'status',
  'external_ref',
  'result',
  'error',
  'compensation',
  'compensation_status',
  'correction',
  'audience',
  'depends_on',
  'attempts',
  'lease_until',
  'lease_owner',
  'last_attempt_at',
  'outcome_delivered',
  'created_at',
  'updated_at',
  'reconcile_lease_until',
  'reconcile_lease_owner',
  'reconcile_attempts',
  'next_reconcile_at',
  'approval_id',
  'step_id',
  'trace_id',
  'span_id',
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await rebuildInOrder(db, ORDER);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await rebuildInOrder(db, ORDER_BEFORE);
}

/**
 * Rebuilds `saga_log` (of the schema the migration runs in) with its columns in `order`; a column the list
 * does not name keeps its place after the named ones (none today).
 */
async function rebuildInOrder(db: Kysely<unknown>, order: readonly string[]): Promise<void> {
  const columns = await sql<{ name: string; type: string; not_null: boolean; default_expr: string | null }>`
    SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
           pg_get_expr(d.adbin, d.adrelid) AS default_expr
      FROM pg_attribute a
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = 'saga_log'::regclass AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY a.attnum`.execute(db);
  const byName = new Map(columns.rows.map((c) => [c.name, c]));
  for (const name of order)
    if (!byName.has(name)) throw new Error(`saga_log has no column ${name} to put in its place`);
  const named = new Set(order);
  const ordered = [...order.map((n) => byName.get(n)!), ...columns.rows.filter((c) => !named.has(c.name))];

  const own = await sql<{ name: string; def: string; kind: string }>`
    SELECT conname AS name, pg_get_constraintdef(oid) AS def, contype AS kind
      FROM pg_constraint WHERE conrelid = 'saga_log'::regclass
     ORDER BY contype = 'p' DESC, contype = 'u' DESC, conname`.execute(db);
  const inbound = await sql<{ owner: string; name: string; def: string }>`
    SELECT conrelid::regclass::text AS owner, conname AS name, pg_get_constraintdef(oid) AS def
      FROM pg_constraint WHERE confrelid = 'saga_log'::regclass AND contype = 'f'
     ORDER BY conrelid::regclass::text, conname`.execute(db);
  const indexes = await sql<{ def: string }>`
    SELECT pg_get_indexdef(i.indexrelid) AS def
      FROM pg_index i
     WHERE i.indrelid = 'saga_log'::regclass
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid)
     ORDER BY i.indexrelid`.execute(db);
  const triggers = await sql<{ def: string }>`
    SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger
     WHERE tgrelid = 'saga_log'::regclass AND NOT tgisinternal ORDER BY tgname`.execute(db);
  const options = await sql<{ reloptions: string[] | null }>`
    SELECT reloptions FROM pg_class WHERE oid = 'saga_log'::regclass`.execute(db);

  const columnList = sql.join(ordered.map((c) => sql.id(c.name)));
  const definitions = sql.join(
    ordered.map(
      (c) =>
        sql`${sql.id(c.name)} ${sql.raw(c.type)}${sql.raw(c.not_null ? ' NOT NULL' : '')}${sql.raw(
          c.default_expr !== null ? ` DEFAULT ${c.default_expr}` : '',
        )}`,
    ),
  );
  const withOptions = options.rows[0]?.reloptions?.length
    ? sql.raw(` WITH (${options.rows[0].reloptions.join(', ')})`)
    : sql.raw('');
  await sql`CREATE TABLE saga_log_reordered (${definitions})${withOptions}`.execute(db);
  const copied = await sql`
    INSERT INTO saga_log_reordered (${columnList}) SELECT ${columnList} FROM saga_log`.execute(db);
  for (const fk of inbound.rows)
    await sql`ALTER TABLE ${sql.raw(fk.owner)} DROP CONSTRAINT ${sql.id(fk.name)}`.execute(db);
  await sql`DROP TABLE saga_log`.execute(db);
  await sql`ALTER TABLE saga_log_reordered RENAME TO saga_log`.execute(db);
  for (const c of own.rows)
    await sql`ALTER TABLE saga_log ADD CONSTRAINT ${sql.id(c.name)} ${sql.raw(c.def)}`.execute(db);
  for (const i of indexes.rows) await sql.raw(i.def).execute(db);
  for (const t of triggers.rows) await sql.raw(t.def).execute(db);
  for (const fk of inbound.rows)
    await sql`ALTER TABLE ${sql.raw(fk.owner)} ADD CONSTRAINT ${sql.id(fk.name)} ${sql.raw(fk.def)}`.execute(
      db,
    );
  // The copy's statistics, for the plans of a log that has rows. An empty log is left never analysed, as a
  // fresh one is: analysed, it would read as known to be empty, and plans made on it could scan it whole
  // (grouped-statement-plans.test.ts caught that).
  if (Number(copied.numAffectedRows ?? 0) > 0) await sql`ANALYZE saga_log`.execute(db);
}
