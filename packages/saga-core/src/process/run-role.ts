import { createDb, type DbOptions, type SagaDb } from '../db/connect.js';
import { closeWithin } from './close-within.js';
import type { BaseConfig } from './config.js';
import { drainOnSignal, exitOnStartFailure } from './drain-on-signal.js';
import { createLogger, type Logger } from './logger.js';
import { startMetricsServer, stopMetricsServer, type MetricsSource } from './metrics-server.js';
import { openSagaDb } from './open-saga-db.js';
import { postgresProbe } from './readiness.js';
import { installKeyNamespace, keyNamespaceFingerprint } from '../steps/intent/key-namespace.js';

/**
 * What every role's config carries for its start-up: the shared base (its metrics listener included); a
 * role that needs no Redis (the compensator) may leave REDIS_URL out.
 */
export type RoleConfig = Omit<BaseConfig, 'REDIS_URL'> & { readonly REDIS_URL?: string };

/** What a role is given once its config is parsed and its pool is open. */
export interface RoleContext<C extends RoleConfig> {
  readonly config: C;
  readonly logger: Logger;
  readonly db: SagaDb;
  /** The pool's connection options, for a role that opens a LISTEN connection with the same bounds. */
  readonly dbOptions: DbOptions;
  /**
   * The pool of the role's grouped hot statements (`groupedStatements`: plans made once per connection,
   * see `GROUPED_STATEMENT_SETTINGS`), for a role whose spec sets `groupPoolSize`; otherwise `db` itself.
   * Only statements whose plans are index-only at any size may be sent on it.
   */
  readonly groupDb: SagaDb;
}

/**
 * The size of a role's pool of grouped statements (`RoleSpec.groupPoolSize`). Why 6: each kind of group has
 * at most one statement in flight (`createStatementGroup`), and no process has more than six kinds (the
 * compensator's read, plan, events, claim, outcome and finish); the pool opens only the connections used.
 */
export const GROUP_POOL_SIZE = 6;

/** A started role, as its entry point describes it to {@link runRole}. */
export interface StartedRole {
  /**
   * The role's own drain, first: stop taking work, let what is under way finish and record. Its
   * connections are closed after it, by {@link StartedRole.connections}.
   */
  readonly stopWork: () => Promise<void>;
  /** A second signal during the drain: abort what is still running, so that it records UNKNOWN. */
  readonly hurry?: () => void;
  /**
   * Served on the role's own listener, `METRICS_HOST:METRICS_PORT` (when the port is > 0), with `/metrics`
   * (behind METRICS_TOKEN when set), `/healthz` and `/readyz`; readiness checks the pool and, for a role
   * that uses Redis, `redis` (a fail-fast call through a producer connection, never a worker's waiting one).
   */
  readonly metrics?: { readonly registry: MetricsSource; readonly redis?: () => Promise<unknown> };
  /** Connections closed after the work stopped and the metrics server, in order, each bounded. */
  readonly connections?: readonly { readonly what: string; readonly close: () => Promise<unknown> }[];
  /** The fields of the role's "started" log line. */
  readonly startedLog: Readonly<Record<string, unknown>>;
}

export interface RoleSpec<C extends RoleConfig> {
  /** The role's name: its log name is `saga-<name>`, its sessions `<PG_APPLICATION_NAME>-<name>`. */
  readonly name: string;
  readonly loadConfig: () => C;
  /** The size of the role's Postgres pool. */
  readonly poolSize: (config: C) => number;
  /**
   * The size of a second pool for the role's grouped statements (`RoleContext.groupDb`); absent: none. A
   * group holds one connection while its statement runs and each kind of group has one statement in
   * flight at a time, so a few connections serve every group of a process.
   */
  readonly groupPoolSize?: number;
  readonly start: (ctx: RoleContext<C>) => Promise<StartedRole>;
}

/**
 * The one start-up of every role process (api, relay, executor, reconciler, compensator): parse the config
 * once, install its key namespace (`SAGA_KEY_NAMESPACE`, before anything can derive a key), open the pool on
 * the saga schema (waiting for Postgres, refusing an unknown schema version), start the role, serve its
 * metrics on their own listener, and drain once on SIGTERM/SIGINT — the role's work first, then the metrics
 * server, its connections and the pool. A failure before the role is started is logged by its message and
 * exits 1 (a bad config names its field).
 */
export async function runRole<C extends RoleConfig>(spec: RoleSpec<C>): Promise<void> {
  let logger: Logger | undefined;
  try {
    const config = spec.loadConfig();
    logger = createLogger({ level: config.LOG_LEVEL, name: `saga-${spec.name}` });
    const log = logger;
    installKeyNamespace(config.SAGA_KEY_NAMESPACE);
    const { db, dbOptions } = await openSagaDb(config, spec.name, spec.poolSize(config), logger);
    const groupDb = spec.groupPoolSize
      ? createDb({
          ...dbOptions,
          poolSize: spec.groupPoolSize,
          applicationName: `${dbOptions.applicationName ?? spec.name}-groups`,
          groupedStatements: true,
        })
      : db;
    const role = await spec.start({ config, logger, db, dbOptions, groupDb });
    const metricsServer =
      role.metrics && config.METRICS_PORT > 0
        ? await startMetricsServer({
            registry: role.metrics.registry,
            port: config.METRICS_PORT,
            host: config.METRICS_HOST,
            token: config.METRICS_TOKEN,
            readiness: {
              database: postgresProbe(db),
              ...(role.metrics.redis ? { redis: role.metrics.redis } : {}),
            },
          })
        : undefined;
    drainOnSignal({
      logger,
      async drain() {
        await role.stopWork();
        if (metricsServer) await stopMetricsServer(metricsServer);
        for (const c of role.connections ?? []) await closeWithin(c.what, c.close, log);
        await db.destroy();
        if (groupDb !== db) await groupDb.destroy();
      },
      hurry: role.hurry,
    });
    logger.info(
      {
        ...role.startedLog,
        // The fingerprint, never the value: every role of one deployment must log the same one.
        keyNamespace: keyNamespaceFingerprint(config.SAGA_KEY_NAMESPACE),
        metrics: metricsServer
          ? {
              host: config.METRICS_HOST,
              port: config.METRICS_PORT,
              token: config.METRICS_TOKEN !== undefined,
            }
          : null,
      },
      `${spec.name} started`,
    );
  } catch (err) {
    exitOnStartFailure(logger, err);
  }
}
