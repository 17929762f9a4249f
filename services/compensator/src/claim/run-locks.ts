import {
  openDedicatedSession,
  pgConnectionConfig,
  withServerKeepAlive,
  type DbOptions,
} from '@agent-saga/core';

/**
 * The lock key of a run: 64 bits of the run id's hash, seeded by the schema's, so two deployments in one
 * database (or the test suite's many schemas) never share a key. One SQL expression, used by both
 * statements below. Why a hash: advisory locks take integers; two open runs sharing a key (about one chance
 * in 10^11 with ten thousand open) would only make one wait until the other's slice ends.
 */
const RUN_LOCK_KEY = 'hashtextextended(c.id, hashtext($2::text))';

/** Locks that could be taken: every one returned is held, once, by this session. */
const TRY_LOCK_SQL = `SELECT c.id FROM unnest($1::text[]) AS c(id) WHERE pg_try_advisory_lock(${RUN_LOCK_KEY})`;
const UNLOCK_SQL = `SELECT pg_advisory_unlock(${RUN_LOCK_KEY}) FROM unnest($1::text[]) AS c(id)`;

export interface RunLocks {
  /**
   * Tries the lock of each run in `runIds` (none of them held by this process already: session locks
   * stack) in one statement; returns those now held, with the session's generation to release them under.
   * Throws while the session is down.
   */
  tryLock(
    runIds: readonly string[],
  ): Promise<{ readonly locked: readonly string[]; readonly generation: number }>;
  /**
   * Releases the locks of `runIds` taken in session `generation`. Locks of an earlier session are gone with
   * it, so they are skipped; an error here means the session is gone too, and with it the locks.
   */
  unlock(runIds: readonly string[], generation: number): Promise<void>;
  /** Ends the session: every lock it holds is released by Postgres. */
  stop(): Promise<void>;
}

export interface RunLocksOptions {
  readonly db: DbOptions;
  /** After a lost session is open again: every lock it held is gone (peers may have taken those runs). */
  readonly onReconnect?: () => void;
  readonly onError?: (err: unknown) => void;
}

/**
 * Which compensator unwinds which run: a Postgres session-level advisory lock per run, held on one
 * dedicated session of the process while the process drives the run.
 *
 * Decision: the run's COMPENSATING status is already the durable request (written by the API's
 * compare-and-set); this adds no row and no write, only a lock in memory. A compensator that dies (SIGKILL,
 * a lost host) loses its session, and Postgres releases its locks at once: a peer's next sweep takes the
 * runs, with no lock timeout to wait out. Exclusivity is an economy, not the safety: every write of an
 * unwind is a compare-and-set on what its own pass read, and each attempt holds a lease of its own, so two
 * drivers on one run (a session lost while its process still drives: a failover) still send each
 * compensation once.
 *
 * The session is core's `openDedicatedSession`: reopened after a loss as a new `generation`, so no lock of
 * the old one is released on the new one.
 */
export async function openRunLocks(schema: string, opts: RunLocksOptions): Promise<RunLocks> {
  const base = pgConnectionConfig({
    ...opts.db,
    applicationName: `${opts.db.applicationName ?? 'agent-saga'}-locks`,
  });
  const session = await openDedicatedSession({
    // The server probes this session's peer: a host that froze or vanished without closing it loses its
    // session, and with it its runs, within about 25 s (the OS default would be two hours). A process that
    // is merely stopped keeps its runs until it resumes or is killed (a liveness probe's restart).
    config: withServerKeepAlive(base),
    ...(opts.onError ? { onError: opts.onError } : {}),
    ...(opts.onReconnect ? { onReconnect: opts.onReconnect } : {}),
    startWaitMs: opts.db.startWaitMs ?? 0,
  });
  // One statement at a time on the session (a take and a release may be asked for together): pg would
  // queue them itself, but that queueing is deprecated and goes in pg 9.
  let last: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(f: () => Promise<T>): Promise<T> => {
    const next = last.then(f, f);
    last = next.catch(() => undefined);
    return next;
  };
  return {
    tryLock: (runIds) =>
      inTurn(async () => {
        const c = session.client;
        if (!c) throw new Error('the run lock session is down; it is being reopened');
        const at = session.generation;
        if (runIds.length === 0) return { locked: [], generation: at };
        const r = await c.query<{ id: string }>(TRY_LOCK_SQL, [runIds, schema]);
        return { locked: r.rows.map((x) => x.id), generation: at };
      }),
    unlock: (runIds, at) =>
      inTurn(async () => {
        const c = session.client;
        if (!c || at !== session.generation || runIds.length === 0) return;
        await c.query(UNLOCK_SQL, [runIds, schema]);
      }),
    stop: () => session.stop(),
  };
}
