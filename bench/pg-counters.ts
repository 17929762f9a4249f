import { sql } from 'kysely';
import type { SagaDb } from '@agent-saga/core';

/**
 * Postgres counters read before and after a phase. Two kinds, with different accuracy:
 *
 * - Cumulative statistics (`pg_stat_database.xact_commit`, `pg_stat_wal`, `pg_stat_user_tables`). Every
 *   committed transaction counts in `xact_commit`, read-only autocommit SELECTs included. A backend
 *   publishes its counts when it goes idle, but at most once a second; counts held back that way wait for
 *   the next flush, which for a backend that stays idle comes 10 s later (PG 15's PGSTAT_MIN_INTERVAL and
 *   PGSTAT_IDLE_INTERVAL), or at its exit. The reader's side is made current with
 *   `pg_stat_clear_snapshot()` (stats_fetch_consistency caches per transaction). The bench reads 'before'
 *   under load (after a ramp) and 'after' BENCH_STATS_SETTLE_MS after the load stops, so up to ~1 s of
 *   counts per backend is missed at each end: the two errors have opposite signs and roughly cancel.
 * - Exact, immediate positions: the WAL insert position (`pg_current_wal_lsn()`) and the next transaction
 *   id (`pg_snapshot_xmax(pg_current_snapshot())`, which assigns none). Only writing transactions take an
 *   xid, so the xid delta counts write transactions (commits and rollbacks) with no delay.
 *
 * Both kinds are cluster- or database-wide: other sessions on the same server count too. That is why the
 * bench also measures a quiet window (see {@link backgroundRates}).
 */
export interface PgCounters {
  /** `performance.now()` when read. */
  readonly atMs: number;
  readonly xactCommit: number;
  readonly xactRollback: number;
  readonly walBytes: number;
  readonly walRecords: number;
  readonly walFpi: number;
  /** WAL flushes to disk (fsync/fdatasync): fewer than commits when commits are grouped. */
  readonly walSync: number;
  readonly walLsn: string;
  readonly nextXid: number;
  /** Row writes per table of `schema`. */
  readonly tables: Readonly<Record<string, { ins: number; upd: number; hotUpd: number; del: number }>>;
}

export async function readPgCounters(db: SagaDb, schema: string): Promise<PgCounters> {
  return db.connection().execute(async (conn) => {
    await sql`SELECT pg_stat_clear_snapshot()`.execute(conn);
    const g = await sql<{
      xact_commit: string;
      xact_rollback: string;
      wal_bytes: string;
      wal_records: string;
      wal_fpi: string;
      wal_sync: string;
      lsn: string;
      next_xid: string;
    }>`
      SELECT d.xact_commit, d.xact_rollback, w.wal_bytes, w.wal_records, w.wal_fpi, w.wal_sync,
             pg_current_wal_lsn()::text AS lsn,
             pg_snapshot_xmax(pg_current_snapshot())::text AS next_xid
        FROM pg_stat_database d, pg_stat_wal w
       WHERE d.datname = current_database()`.execute(conn);
    const t = await sql<{ relname: string; ins: string; upd: string; hot: string; del: string }>`
      SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot, n_tup_del AS del
        FROM pg_stat_user_tables WHERE schemaname = ${schema}`.execute(conn);
    const r = g.rows[0];
    if (!r) throw new Error('pg_stat_database has no row for the current database');
    return {
      atMs: performance.now(),
      xactCommit: Number(r.xact_commit),
      xactRollback: Number(r.xact_rollback),
      walBytes: Number(r.wal_bytes),
      walRecords: Number(r.wal_records),
      walFpi: Number(r.wal_fpi),
      walSync: Number(r.wal_sync),
      walLsn: r.lsn,
      nextXid: Number(r.next_xid),
      tables: Object.fromEntries(
        t.rows.map((x) => [
          x.relname,
          { ins: Number(x.ins), upd: Number(x.upd), hotUpd: Number(x.hot), del: Number(x.del) },
        ]),
      ),
    };
  });
}

/** What changed between two reads. */
export interface PgDelta {
  readonly seconds: number;
  readonly xactCommit: number;
  readonly xactRollback: number;
  /** Write transactions (xids assigned), exact. */
  readonly writeXacts: number;
  /** WAL bytes by insert position, exact. */
  readonly walBytesLsn: number;
  /** The insert positions at both ends, for reading the window's records (`pg_walinspect`). */
  readonly walLsnRange: readonly [from: string, to: string];
  /** WAL bytes by `pg_stat_wal` (subject to the flush delay). */
  readonly walBytesStat: number;
  readonly walRecords: number;
  readonly walFpi: number;
  readonly walSync: number;
  readonly tables: Readonly<Record<string, { ins: number; upd: number; hotUpd: number; del: number }>>;
}

export function pgDelta(before: PgCounters, after: PgCounters): PgDelta {
  const tables: Record<string, { ins: number; upd: number; hotUpd: number; del: number }> = {};
  for (const [name, a] of Object.entries(after.tables)) {
    const b = before.tables[name] ?? { ins: 0, upd: 0, hotUpd: 0, del: 0 };
    const d = { ins: a.ins - b.ins, upd: a.upd - b.upd, hotUpd: a.hotUpd - b.hotUpd, del: a.del - b.del };
    if (d.ins || d.upd || d.del) tables[name] = d;
  }
  return {
    seconds: (after.atMs - before.atMs) / 1000,
    xactCommit: after.xactCommit - before.xactCommit,
    xactRollback: after.xactRollback - before.xactRollback,
    writeXacts: after.nextXid - before.nextXid,
    walBytesLsn: lsnToBytes(after.walLsn) - lsnToBytes(before.walLsn),
    walLsnRange: [before.walLsn, after.walLsn],
    walBytesStat: after.walBytes - before.walBytes,
    walRecords: after.walRecords - before.walRecords,
    walFpi: after.walFpi - before.walFpi,
    walSync: after.walSync - before.walSync,
    tables,
  };
}

/** Per-second rates of the counters over a window in which the bench itself does nothing. */
export interface BackgroundRates {
  readonly seconds: number;
  readonly xactCommitPerS: number;
  readonly writeXactsPerS: number;
  readonly walBytesPerS: number;
}

/**
 * Measures what the rest of the server does while the bench is quiet, so per-call figures can be given
 * net of it. Other sessions (tests running beside the bench) make every cluster-wide counter noisy.
 */
export async function backgroundRates(db: SagaDb, schema: string, seconds: number): Promise<BackgroundRates> {
  const before = await readPgCounters(db, schema);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const d = pgDelta(before, await readPgCounters(db, schema));
  return {
    seconds: d.seconds,
    xactCommitPerS: d.xactCommit / d.seconds,
    writeXactsPerS: d.writeXacts / d.seconds,
    walBytesPerS: d.walBytesLsn / d.seconds,
  };
}

/** A `pg_lsn` text (`16/B374D848`) as a byte position. */
function lsnToBytes(lsn: string): number {
  const [hi, lo] = lsn.split('/');
  return parseInt(hi ?? '0', 16) * 2 ** 32 + parseInt(lo ?? '0', 16);
}
