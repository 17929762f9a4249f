import type { SagaDb, SagaTrx } from '../db/connect.js';
import { readDeadline } from '../db/db-clock.js';

/** Whether a lookup's "not found" may be believed yet, and from when. */
export interface LookupLag {
  /** The last attempt was sent more than the tool's `lookupLagMs` ago (by the database's clock). */
  readonly passed: boolean;
  /** When it will have (or had): the earliest moment a "not found" is evidence of absence. */
  readonly believableAt: Date;
}

/**
 * Reads, by the database's clock, whether more than `lagMs` has passed since `lastAttemptAt`
 * (`lastAttemptAt + lag < now()`, see {@link readDeadline}). `lastAttemptAt` must be a timestamp the
 * database wrote (a row's `last_attempt_at`, or its `updated_at` for a row never attempted), never the
 * process's clock. No row is read or written.
 */
export async function readLookupLag(
  db: SagaDb | SagaTrx,
  lastAttemptAt: Date,
  lagMs: number,
): Promise<LookupLag> {
  const d = await readDeadline(db, lastAttemptAt, lagMs);
  return { passed: d.passed, believableAt: d.at };
}
