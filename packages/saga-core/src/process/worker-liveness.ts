import { sql, type RawBuilder } from 'kysely';
import { pgConnectionConfig, type DbOptions } from '../db/connect.js';
import { openDedicatedSession, withServerKeepAlive } from '../db/dedicated-session.js';
import { newWorkerId } from './worker-id.js';

/**
 * The ending of a worker id whose process proves it is alive ({@link holdWorkerLiveness}); a lease owner
 * without it (an older process, the API's inline executor) is only ever waited out by its lease's time.
 */
const LIVE_SUFFIX = '+live';

/**
 * Why 2: the lock is taken with two int4 keys, (the schema's hash, the worker id's hash), which Postgres
 * records in `pg_locks` as `classid`, `objid` and `objsubid = 2` (a single bigint key would be
 * `objsubid = 1`); the liveness check reads those columns.
 */
const TWO_KEY_LOCK = 2;

/** A worker's proof of life: see {@link holdWorkerLiveness}. */
export interface WorkerLiveness {
  /** The id to lease steps under (`lease_owner`): a new one per process, ending in `+live`. */
  readonly workerId: string;
  /** Ends the session: from then on the worker's leases count as lapsed. Call once nothing runs. */
  stop(): Promise<void>;
}

export interface WorkerLivenessOptions {
  readonly db: DbOptions;
  /** Told of a lost session (while it is down the worker's leases count as lapsed) or a failed reconnect. */
  readonly onError?: (err: unknown) => void;
}

/**
 * Makes a process's death visible at once to whoever waits on its leases, instead of when they run out.
 *
 * Decision: the process holds a session-level advisory lock keyed by (the schema, its worker id) on one
 * dedicated session of its own; Postgres releases it the moment the session ends: a SIGKILL, a crash, a
 * host whose TCP peer vanished (server-side keep-alive ends a frozen host's session in about 25 s). A
 * lease whose owner's lock no one holds has lapsed whatever its `lease_until` says
 * ({@link leaseHolderGone}), so the reconciler looks the step up by key within a sweep of the death, not a
 * tool timeout later (an executor killed under a Jira create left its step INTENDED 3.5 s in the
 * simulation, 30 s with production timeouts). It adds no row and no write to the hot path: one lock in
 * memory per process.
 *
 * Safe when wrong: the lock session can be lost while the process lives (a Postgres failover). Its steps
 * are then looked up early, exactly as if their leases had run out: a "not found" is believed only past
 * the commit horizon, a re-send goes only under the key of a vendor that dedupes by it, and an effect that
 * the live process records afterwards settles an UNKNOWN step as CONFIRMED (`record-outcome.ts`). The lock
 * is taken again on the reopened session, under the same id.
 */
export async function holdWorkerLiveness(schema: string, o: WorkerLivenessOptions): Promise<WorkerLiveness> {
  const workerId = `${newWorkerId()}${LIVE_SUFFIX}`;
  const config = withServerKeepAlive(
    pgConnectionConfig({ ...o.db, applicationName: `${o.db.applicationName ?? 'agent-saga'}-liveness` }),
  );
  const session = await openDedicatedSession({
    config,
    // A try, never a wait: only a hash collision with a live worker could find it taken, and then that
    // worker's lock vouches for this one too (a dead one looks alive: its lease's time still ends it).
    setUp: async (c) => {
      await c.query('SELECT pg_try_advisory_lock(hashtext($1), hashtext($2))', [schema, workerId]);
    },
    ...(o.onError ? { onError: o.onError } : {}),
    startWaitMs: o.db.startWaitMs ?? 0,
  });
  return { workerId, stop: () => session.stop() };
}

/**
 * SQL, true when the holder of the row's lease (`lease_owner`) proved liveness and has died: its id ends
 * in `+live` and no session of this database holds its lock. One uncorrelated read of `pg_locks` per
 * statement (a hashed subplan), whatever the number of rows. `leaseOwner` names the column, for a query
 * that aliases the table. The one home of "the lease holder is gone"; every caller ORs it with
 * `lease_until < now()`.
 */
export function leaseHolderGone(
  schema: string,
  leaseOwner: RawBuilder<unknown> = sql.ref('lease_owner'),
): RawBuilder<boolean> {
  return sql<boolean>`(${leaseOwner} LIKE ${'%' + LIVE_SUFFIX} AND hashtext(${leaseOwner})::oid NOT IN (
    SELECT l.objid FROM pg_locks l
     WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = ${sql.lit(TWO_KEY_LOCK)}
       AND l.classid = hashtext(${schema})::oid
       AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())))`;
}
