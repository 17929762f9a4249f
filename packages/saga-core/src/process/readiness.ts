import { sql } from 'kysely';
import type { SagaDb } from '../db/connect.js';
import { SagaError } from '../errors/errors.js';
import { withinMs } from './within-ms.js';

/**
 * Why 2 s: a healthy Postgres answers `SELECT 1` and Redis a PING in about a millisecond; an orchestrator
 * probes every few seconds and wants an answer before its own probe timeout (1 s to 10 s, commonly), and a
 * dependency that needs longer is not one to send work to.
 */
export const READINESS_CHECK_TIMEOUT_MS = 2_000;

/**
 * The outcome of one readiness check: `detail` says why it is down, in words safe to show anyone who can
 * reach the port (see {@link readinessDetail}).
 */
export interface ReadinessCheck {
  readonly ok: boolean;
  readonly detail?: string;
}

/** What `/readyz` answers: ready when every check is ok. */
export interface Readiness {
  readonly status: 'ready' | 'unready';
  readonly checks: Readonly<Record<string, ReadinessCheck>>;
}

/** A named probe of one dependency: resolves when it is reachable, rejects (or hangs) when not. */
export type ReadinessProbes = Readonly<Record<string, () => Promise<unknown>>>;

/**
 * Why a probe failed, as `/readyz` may say it without a token: the harness's own errors by their message
 * (a timeout, a schema version; written by us, naming no host or user), anything else only by its code
 * (`ECONNREFUSED`, a SQLSTATE such as `28P01`). A driver's message can carry a host, a port, a user name or
 * a database name; those go to the role's log, not to an unauthenticated answer.
 */
export function readinessDetail(err: unknown): string {
  if (err instanceof SagaError) return err.message;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z0-9_]{2,32}$/.test(code)
    ? `unavailable (${code})`
    : 'unavailable';
}

/** Runs one probe under `timeoutMs`; never rejects. */
export async function probeDependency(
  probe: () => Promise<unknown>,
  timeoutMs: number = READINESS_CHECK_TIMEOUT_MS,
): Promise<ReadinessCheck> {
  try {
    await withinMs(probe(), timeoutMs, 'readiness check');
    return { ok: true };
  } catch (err) {
    return { ok: false, detail: readinessDetail(err) };
  }
}

/** Runs every probe at once, each bounded, so `/readyz` answers within about `timeoutMs` whatever is down. */
export async function checkReadiness(
  probes: ReadinessProbes,
  timeoutMs: number = READINESS_CHECK_TIMEOUT_MS,
): Promise<Readiness> {
  const names = Object.keys(probes);
  const results = await Promise.all(names.map((n) => probeDependency(probes[n]!, timeoutMs)));
  const checks = Object.fromEntries(names.map((n, i) => [n, results[i]!]));
  return { status: results.every((r) => r.ok) ? 'ready' : 'unready', checks };
}

/** The Postgres probe: one `SELECT 1` through the role's own pool. */
export function postgresProbe(db: SagaDb): () => Promise<unknown> {
  return () => sql`SELECT 1`.execute(db);
}
