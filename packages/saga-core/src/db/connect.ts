import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { SAGA_TYPE_PARSERS } from './parse-timestamptz.js';
import { installPreparedStatements } from './prepared-statements.js';
import type { Database } from './schema.js';

export type SagaDb = Kysely<Database>;
export type SagaTrx = Transaction<Database>;

/** A Postgres schema name we are willing to put on a connection's search_path. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Bounds on every wait for Postgres, so no role hangs on a server that went away (a restart, a failover, a
 * network partition). 0 switches a server-side bound off (`statementTimeoutMs: 0` for migrations).
 */
export interface PgTimeouts {
  /** Connecting, TLS and authentication included (`connectionTimeoutMillis`). */
  readonly connectTimeoutMs?: number;
  /** `statement_timeout`: the server cancels a statement running longer; the client gives up a little later. */
  readonly statementTimeoutMs?: number;
  /** `idle_in_transaction_session_timeout`: the server ends a session that holds a transaction open, idle. */
  readonly idleInTransactionTimeoutMs?: number;
}

/**
 * Defaults of {@link PgTimeouts} (also the defaults of `PG_*_TIMEOUT_MS` in the shared config).
 *
 * Why 5 s to connect: a reachable server accepts in milliseconds, a busy one with TLS in well under a
 * second; without a bound, a connect to a host that went away waits for the kernel's SYN retries (about two
 * minutes) with the caller's request hanging behind it.
 * Why 30 s per statement: the roles' statements take milliseconds and the slowest (a sweep, a gauge read
 * over a large log) well under a second; 30 s leaves room for a bench's bulk writes and still ends a
 * statement stuck behind a lock that nobody will release.
 * Why 60 s idle in a transaction: no transaction of ours waits on anything but Postgres between its
 * statements (the relay commits before it talks to Redis), so a session idle inside one for a minute is a
 * process that hangs while holding row locks; ending it releases them.
 */
export const DEFAULT_PG_TIMEOUTS = {
  connectTimeoutMs: 5_000,
  statementTimeoutMs: 30_000,
  idleInTransactionTimeoutMs: 60_000,
} as const satisfies Required<PgTimeouts>;

/**
 * Why 5 s beyond the statement timeout: the client-side `query_timeout` is only the backstop for a
 * connection that went silent (no RST from a dead host), where the server's own cancel never arrives; it
 * must not race the server's cancel on a live connection.
 */
const QUERY_TIMEOUT_MARGIN_MS = 5_000;

export interface DbOptions extends PgTimeouts {
  readonly url: string;
  /** The Postgres schema that holds the saga log (one per deployment, or per test file). */
  readonly schema: string;
  readonly poolSize?: number;
  readonly applicationName?: string;
  /**
   * The pool runs the grouped hot statements only ({@link GROUPED_STATEMENT_SETTINGS}): their plans are made
   * once per connection, not on every execution. Absent or false: every plan is made for its execution.
   */
  readonly groupedStatements?: boolean;
  /**
   * How long the first connection of a role is retried while Postgres cannot be reached (`PG_START_WAIT_MS`);
   * 0 or unset: one try. Used by `openSagaDb` and by `listenChannel`'s first LISTEN.
   */
  readonly startWaitMs?: number;
  /**
   * Told of an error on a pooled connection outside a query (its backend terminated, the server
   * restarted, a transaction left idle too long). pg drops that connection and opens a new one on the next
   * query; the process goes on. Without a listener the `'error'` event would be thrown and end the process.
   */
  readonly onPoolError?: (err: Error) => void;
}

/**
 * The settings of a pool that runs only the grouped hot statements (`createStatementGroup`: the intake,
 * claim, outcome and delivered-mark groups, and the compensator's): a cached generic plan for each named
 * statement, made once per connection, and no sequential scan in it.
 *
 * Why: with a plan made for every execution (the default above), planning was the largest part of
 * Postgres's CPU for a call: each group statement joins several CTEs, and was planned anew per group
 * (docs/benchmarks.md, "Plans made once": 234 → 156 µs of the backend's CPU per call for the inline
 * path's two statements in groups of 16, `bench/hot-statements-cpu.ts`; 0.40 → 0.23 ms of Postgres CPU
 * per call in the bench).
 * Why it is safe for these statements and not for every one: each of them reads rows only by the key it
 * was given (a run's primary key, a step's `(run_id, step_idx)`), which an index answers at any size; the
 * danger of a cached generic plan is a sequential scan chosen while a table was small (or never analysed)
 * and kept while it grows, and `enable_seqscan = off` leaves the planner the index paths only, whatever
 * the statistics say when the plan is made. `grouped-statement-plans.test.ts` (core's and the
 * compensator's) reads the plans of every grouped statement, made on an empty schema and on a loaded one, and fails on a sequential scan or
 * an index scan without a key condition. A statement whose plan cannot be index-only does not belong on
 * this pool.
 * Why `jit = off`: a statement here reads a few rows by key, which JIT never repays; and one that must scan
 * anyway (a trigger's query: nested statements run with the session's settings) is costed at 10¹⁰ under
 * `enable_seqscan = off`, past every JIT threshold, so Postgres would compile it, inlined and optimised, on
 * every execution. The capture-check trigger did (migration 0025): 250–340 ms of Postgres CPU per confirmed
 * payment step, a third of Postgres's CPU in `pnpm simulate`. The plans test reads nested plans too.
 */
export const GROUPED_STATEMENT_SETTINGS =
  '-c plan_cache_mode=force_generic_plan -c enable_seqscan=off -c jit=off';

/** pg connection settings that put the saga schema first on the search path, with every wait bounded. */
export function pgConnectionConfig(opts: DbOptions): pg.PoolConfig {
  if (!SCHEMA_NAME.test(opts.schema))
    throw new RangeError(`invalid schema name ${JSON.stringify(opts.schema)}`);
  const statementMs = opts.statementTimeoutMs ?? DEFAULT_PG_TIMEOUTS.statementTimeoutMs;
  const idleInTrxMs = opts.idleInTransactionTimeoutMs ?? DEFAULT_PG_TIMEOUTS.idleInTransactionTimeoutMs;
  return {
    connectionString: opts.url,
    max: opts.poolSize ?? 10,
    application_name: opts.applicationName ?? 'agent-saga',
    // Why force_custom_plan: the hot statements are named prepared statements (prepared-statements.ts), and
    // Postgres switches a prepared statement to a cached generic plan after five executions. On a fresh or
    // small log that plan is a sequential scan of `saga_log` and `outbox` (the cheapest path over a few
    // pages), and it stays cached while the tables grow until autovacuum's ANALYZE invalidates it: measured
    // in the bench, the executor's claim read 150 buffers per claimed row. A custom plan is made for each
    // execution from the table's current size, so it uses the indexes as soon as they pay; the statement is
    // still parsed once per connection. Unnamed statements are planned per execution anyway. A pool of the
    // grouped statements runs with GROUPED_STATEMENT_SETTINGS instead.
    options: `-c search_path=${opts.schema} ${opts.groupedStatements ? GROUPED_STATEMENT_SETTINGS : '-c plan_cache_mode=force_custom_plan'}`,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? DEFAULT_PG_TIMEOUTS.connectTimeoutMs,
    // pg's parsers, but timestamps read by position (`parseTimestamptz`): the hot rows carry several.
    types: SAGA_TYPE_PARSERS,
    // TCP keep-alive: a connection to a host that vanished without a RST is noticed and dropped.
    keepAlive: true,
    ...(statementMs > 0
      ? { statement_timeout: statementMs, query_timeout: statementMs + QUERY_TIMEOUT_MARGIN_MS }
      : {}),
    ...(idleInTrxMs > 0 ? { idle_in_transaction_session_timeout: idleInTrxMs } : {}),
  };
}

/**
 * A pool whose connect timeout bounds connecting only. pg-pool applies `connectionTimeoutMillis` to the
 * wait for a free pooled client as well, which would turn a burst of requests queued behind a busy pool into
 * errors; that wait is bounded already, by the statement and idle-in-transaction timeouts of the clients
 * ahead of it (and, with Postgres down, by each connect attempt's own bound). So the timeout goes to each
 * client (pg's `Client` honours it for its own connect) and not to the pool.
 */
function boundedPool(config: pg.PoolConfig): pg.Pool {
  const { connectionTimeoutMillis, ...poolConfig } = config;
  class BoundedConnectClient extends pg.Client {
    constructor(clientConfig?: pg.ClientConfig) {
      super({ ...clientConfig, connectionTimeoutMillis });
    }
  }
  return new pg.Pool({ ...poolConfig, Client: BoundedConnectClient });
}

// Postgres BIGINT (int8) ids arrive as strings; keep them so (no precision loss), but parse timestamps.
export function createDb(opts: DbOptions): SagaDb {
  const pool = boundedPool(pgConnectionConfig(opts));
  // Never throws: a connection that broke is the pool's to replace, not a reason to exit. A client checked
  // out of the pool (inside a transaction, between two statements) has no pool listener while it is out:
  // pg would throw its 'error' (a backend terminated, the idle-in-transaction timeout), so every client gets
  // one listener of its own for its whole life, which reports; the pool's own event (the same error, for an
  // idle client) only needs a listener so that it is not thrown.
  pool.on('connect', (client) => client.on('error', (err) => opts.onPoolError?.(err)));
  pool.on('error', () => {});
  installPreparedStatements(pool);
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
