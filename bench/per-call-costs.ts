import type { BackgroundRates, PgDelta } from './pg-counters.js';

/** Postgres work per call (or per baseline job) over a sustained phase. */
export interface PerCallCosts {
  /** Calls that completed between the two counter reads. */
  readonly calls: number;
  /** `pg_stat_database.xact_commit` per call: every committed transaction, read-only ones included. */
  readonly commits: number;
  /** Write transactions per call (xids assigned), raw and net of the quiet window's background rate. */
  readonly writeXacts: number;
  readonly writeXactsNet: number;
  /** WAL bytes per call by insert position, raw and net of background; and by `pg_stat_wal`. */
  readonly walBytes: number;
  readonly walBytesNet: number;
  readonly walBytesStat: number;
  readonly walRecords: number;
  readonly walFpi: number;
  /** WAL flushes per call: below the write transactions when concurrent commits share a flush. */
  readonly walSyncs: number;
  /** Rows written per call in each table of the bench schema (inserts, updates). */
  readonly rows: Readonly<Record<string, { ins: number; upd: number }>>;
  readonly background: BackgroundRates;
  readonly delta: PgDelta;
}

export function perCallCosts(delta: PgDelta, background: BackgroundRates, calls: number): PerCallCosts {
  const per = (x: number) => x / calls;
  return {
    calls,
    commits: per(delta.xactCommit),
    writeXacts: per(delta.writeXacts),
    writeXactsNet: per(delta.writeXacts - background.writeXactsPerS * delta.seconds),
    walBytes: per(delta.walBytesLsn),
    walBytesNet: per(delta.walBytesLsn - background.walBytesPerS * delta.seconds),
    walBytesStat: per(delta.walBytesStat),
    walRecords: per(delta.walRecords),
    walFpi: per(delta.walFpi),
    walSyncs: per(delta.walSync),
    rows: Object.fromEntries(
      Object.entries(delta.tables).map(([t, d]) => [t, { ins: per(d.ins), upd: per(d.upd) }]),
    ),
    background,
    delta,
  };
}
