import { z } from 'zod';
import { ConfigError } from '../errors/errors.js';
import { DEFAULT_PG_TIMEOUTS, SCHEMA_NAME } from '../db/connect.js';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './bullmq-connection.js';

/**
 * Why printable ASCII without spaces: a value pasted with a trailing space or newline into one role's
 * environment would silently be another value; refusing it at start names the variable instead.
 */
const PRINTABLE = /^[\x21-\x7e]+$/;

/** A positive integer read from an env var string. */
export const envInt = (def: number) => z.coerce.number().int().positive().default(def);

/**
 * Settings every agent-saga process shares. Services extend this with their own (`.extend({...})`) and
 * parse once at start with {@link parseConfig}; nothing else reads `process.env`.
 */
export const baseConfigSchema = z.object({
  DATABASE_URL: z.string().url(),
  /** Postgres schema of the saga log: one per deployment. */
  SAGA_DB_SCHEMA: z.string().regex(SCHEMA_NAME).default('saga'),
  REDIS_URL: z.string().url(),
  /** BullMQ key prefix: deployments (and test files) sharing one Redis stay apart. */
  SAGA_QUEUE_PREFIX: z.string().min(1).default('saga'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Bound on connecting to Postgres, in ms (see `DEFAULT_PG_TIMEOUTS` for the why of each default). */
  PG_CONNECT_TIMEOUT_MS: envInt(DEFAULT_PG_TIMEOUTS.connectTimeoutMs),
  /** Postgres `statement_timeout` of every pooled connection, in ms; 0 switches it off. */
  PG_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(DEFAULT_PG_TIMEOUTS.statementTimeoutMs),
  /** Postgres `idle_in_transaction_session_timeout`, in ms; 0 switches it off. */
  PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(DEFAULT_PG_TIMEOUTS.idleInTransactionTimeoutMs),
  /**
   * Prefix of every Postgres `application_name` the process sets (`<prefix>-<role>`), so an operator (or a
   * test) can tell one deployment's sessions apart in `pg_stat_activity`.
   */
  PG_APPLICATION_NAME: z.string().min(1).max(40).default('agent-saga'),
  /**
   * How long a role waits at start for Postgres to accept it (a role started while Postgres restarts, or
   * before it is up), in ms. Why 60 s: a restart or a failover takes seconds to tens of seconds; past a
   * minute the orchestrator's restart policy is the better judge. A schema at the wrong version is not
   * waited for: it fails at once.
   */
  PG_START_WAIT_MS: envInt(60_000),
  /** Bound on one Redis command of a producer (a queue add, a readiness check), in ms. */
  REDIS_COMMAND_TIMEOUT_MS: envInt(DEFAULT_REDIS_COMMAND_TIMEOUT_MS),
  /**
   * Mixed (hashed) into every key the harness derives, so two deployments sharing a vendor account never
   * send the same key for the same run id: set one per deployment, the same in every role of it. Unset:
   * `null`, today's keys exactly. Read by `runRole`, which installs it for the process (`key-namespace.ts`).
   */
  SAGA_KEY_NAMESPACE: z
    .string()
    .max(256)
    .regex(PRINTABLE, 'printable ASCII without spaces, 1–256 characters')
    .optional()
    .transform((v) => v ?? null),
  /** Port of the role's own metrics listener (`/metrics`, `/healthz`, `/readyz`); 0: none. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  /**
   * Interface of the metrics listener. Why 127.0.0.1 by default: `/metrics` names tools, tenants' volumes
   * and backlogs; a deployment that scrapes from another host binds it wider (`0.0.0.0`) and sets
   * METRICS_TOKEN.
   */
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * When set, `GET /metrics` on the metrics listener needs `Authorization: Bearer <token>` (401 without).
   * `/healthz` and `/readyz` stay open: orchestrators probe them without credentials. Why at least 16
   * characters: a shorter bearer is guessable by a scraper left on the network.
   */
  METRICS_TOKEN: z
    .string()
    .min(16)
    .regex(PRINTABLE, 'printable ASCII without spaces, at least 16 characters')
    .optional(),
  /** Switches on named crash points (`crashPoint`). Only tests set it. */
  SAGA_CRASH_POINTS: z.string().default(''),
});
export type BaseConfig = z.infer<typeof baseConfigSchema>;

/** Parses `env` with `schema` into a frozen object; a missing or bad variable fails naming it. */
export function parseConfig<S extends z.ZodType<Record<string, unknown>>>(
  schema: S,
  env: Record<string, string | undefined>,
): Readonly<z.infer<S>> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return Object.freeze(parsed.data);
}
