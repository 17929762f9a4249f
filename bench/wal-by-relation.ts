import { sql } from 'kysely';
import type { SagaDb } from '@agent-saga/core';

/** One relation's records of one kind in a window, per call. */
export interface WalRelationRow {
  /** A table or index of the bench schema, else `(other)` (another schema, a sequence elsewhere), or `(none)`
   * for records that name no relation (commits). */
  readonly relation: string;
  /** `resource manager/record type`, as pg_walinspect names it (`Heap/INSERT`, `Btree/INSERT_LEAF`). */
  readonly record: string;
  readonly recordsPerCall: number;
  readonly bytesPerCall: number;
  readonly avgBytes: number;
}

export interface WalByRelation {
  readonly calls: number;
  /** Every record of the window, exact (other sessions' too, as the WAL position's bytes). */
  readonly recordsPerCall: number;
  readonly bytesPerCall: number;
  /** Largest share of bytes first. */
  readonly rows: readonly WalRelationRow[];
}

/**
 * The WAL records of a window between two insert positions, per call, by relation and record type: where
 * each call's WAL goes, read from the WAL itself with `pg_walinspect` (Postgres 15+). The bench creates
 * nothing outside its schema, so this reads only when the extension is already installed in the bench's
 * database (`CREATE EXTENSION pg_walinspect`, as a superuser) and the bench's role may call it; otherwise
 * null, and the report says how to get it. Read right after the window: a checkpoint recycles the segments
 * (raise `wal_keep_size` to read a window later).
 */
export async function readWalByRelation(
  db: SagaDb,
  schema: string,
  range: readonly [from: string, to: string],
  calls: number,
): Promise<WalByRelation | null> {
  // Its functions live in the schema it was created in, which the bench's search path does not name.
  const installed = await sql<{ ns: string }>`
    SELECT extnamespace::regnamespace::text AS ns FROM pg_extension WHERE extname = 'pg_walinspect'`.execute(
    db,
  );
  const ns = installed.rows[0]?.ns;
  if (ns === undefined || calls <= 0) return null;
  try {
    const r = await sql<{ relation: string; record: string; records: string; bytes: string }>`
      WITH w AS (
        SELECT resource_manager || '/' || record_type AS record, record_length,
               (regexp_match(block_ref, 'rel \\d+/\\d+/(\\d+)'))[1]::oid AS filenode
          FROM ${sql.id(ns)}.pg_get_wal_records_info(${range[0]}::pg_lsn, ${range[1]}::pg_lsn)
      )
      SELECT CASE WHEN w.filenode IS NULL THEN '(none)' ELSE coalesce(c.relname, '(other)') END AS relation,
             w.record, count(*)::text AS records, sum(w.record_length)::text AS bytes
        FROM w
        LEFT JOIN pg_class c ON c.relfilenode = w.filenode AND c.relnamespace = ${schema}::regnamespace
       GROUP BY 1, 2`.execute(db);
    const rows = r.rows
      .map((x) => ({
        relation: x.relation,
        record: x.record,
        recordsPerCall: Number(x.records) / calls,
        bytesPerCall: Number(x.bytes) / calls,
        avgBytes: Number(x.bytes) / Number(x.records),
      }))
      .sort((a, b) => b.bytesPerCall - a.bytesPerCall);
    return {
      calls,
      recordsPerCall: rows.reduce((s, x) => s + x.recordsPerCall, 0),
      bytesPerCall: rows.reduce((s, x) => s + x.bytesPerCall, 0),
      rows,
    };
  } catch (err) {
    // No privilege to read the WAL, or its segments already recycled: the figure is missing, not wrong.
    console.error(`WAL by relation not read: ${(err as Error).message}`);
    return null;
  }
}
