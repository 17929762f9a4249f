import { sql, type Kysely } from 'kysely';

/**
 * The outbox messages of one step, by key, newest last: `outbox_by_key (idempotency_key, id)`.
 *
 * Every dispatch of a step is one outbox row under its key (the intake's, each re-dispatch after
 * NOT_EXECUTED, each republish of an intent whose job Redis lost). Three reads ask for a step's messages:
 * the next dispatch number (`max(dispatchNo) … WHERE idempotency_key = $key`), the fast path's read of the
 * dispatch it just wrote (`ORDER BY id DESC LIMIT 1`), and the republish sweep's "latest dispatch of this
 * INTENDED step, and when was it published". Without this index each of them scans the whole outbox, which
 * keeps every row ever written; with it each reads a step's few rows. One index entry per dispatch is the
 * write cost, on a table that is append-mostly.
 *
 * Plain `CREATE INDEX` (migrations run in one transaction, where CONCURRENTLY is refused): on a large outbox
 * it blocks outbox writes while it builds; run the migration in a quiet moment. Imports nothing live.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX outbox_by_key ON outbox (idempotency_key, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX outbox_by_key`.execute(db);
}
