import { sql } from 'kysely';
import { z } from 'zod';
import type { SagaTrx } from '../../db/connect.js';
import type { StepRow } from '../../db/schema.js';
import { StepEventKind } from '../step-event-kind.js';
import { StepStatus } from '../step-status.js';
import { openCase } from '../../review/cases/open-case.js';
import { transitionStep } from '../transition-step.js';

/**
 * Why 3: a re-dispatch follows a proof that the attempt never reached the system (a crash before the call,
 * a timeout the vendor never saw). Once is bad luck, twice a flaky network; a step that comes back
 * NOT_EXECUTED a fourth time fails the same way every time (a poison call), and each loop costs a tool
 * timeout and a lookup lag while its agent waits.
 */
export const DEFAULT_MAX_REDISPATCHES = 3;

/**
 * Why a span as well as a count: three loops are evidence of a poison call only when each took the call's
 * own time to fail. In a restart storm or a failover they do not: an attempt dies with its executor, or
 * times out while a freshly started process warms up, and the lookup of a vendor that dedupes by key
 * answers "not found" within its lag, so three re-dispatches can come and go in seconds. Measured in
 * `pnpm simulate` (10,000 episodes of seed 20270, 6 December 2026, an executor SIGKILLed every 2.5 s):
 * five Stripe steps of five runs spent the budget within 1.2 s of one another, each about 20 s after it
 * was first sent, and went to a person although the next send would have been answered (with the span,
 * the same episodes sent none). So the harness
 * gives up only once the step has been re-dispatched `SAGA_MAX_REDISPATCHES` times **and** the first of
 * those re-dispatches is at least `SAGA_REDISPATCH_MIN_SPAN_MS` old (Postgres's clock). With a production
 * tool timeout (tens of seconds) three loops take longer than the span, so the count alone decides, as
 * before; only loops faster than that go on, until the span has passed.
 */
export const DEFAULT_REDISPATCH_MIN_SPAN_MS = 60_000;

/**
 * Why a cap: a call that kills its executor each time it runs (a poison payload) loops at the pace of the
 * executors' liveness checks, seconds, and takes every other call in flight on the killed process with it.
 * However young the first re-dispatch, the harness stops at this many times the budget.
 */
export const REDISPATCH_HARD_CAP_FACTOR = 3;

/**
 * The re-dispatch budget, for the config schema of every role that re-dispatches (the API, the reconciler):
 * `baseConfigSchema.extend({ ..., ...redispatchBudgetConfig() })`, so both read the same variables.
 */
export const redispatchBudgetConfig = () => ({
  /** Re-dispatches of one step, each after a proof it never reached the system, before a person decides. */
  SAGA_MAX_REDISPATCHES: z.coerce.number().int().min(0).default(DEFAULT_MAX_REDISPATCHES),
  /** How old the step's first re-dispatch must be before the budget above is spent (see the default). */
  SAGA_REDISPATCH_MIN_SPAN_MS: z.coerce.number().int().min(0).default(DEFAULT_REDISPATCH_MIN_SPAN_MS),
});

/** The budget a role's parsed config gives (the variables of {@link redispatchBudgetConfig}). */
export function redispatchBudgetOf(config: {
  readonly SAGA_MAX_REDISPATCHES: number;
  readonly SAGA_REDISPATCH_MIN_SPAN_MS: number;
}): RedispatchBudget {
  return { maxRedispatches: config.SAGA_MAX_REDISPATCHES, minSpanMs: config.SAGA_REDISPATCH_MIN_SPAN_MS };
}

/** The harness's re-dispatches of one step since a person last acted on it (see {@link countRedispatches}). */
export interface RedispatchCount {
  readonly count: number;
  /** How long ago the first of them was made (Postgres's clock); 0 when there is none. */
  readonly spanMs: number;
}

/** A budget: `SAGA_MAX_REDISPATCHES` and `SAGA_REDISPATCH_MIN_SPAN_MS` (default when absent). */
export interface RedispatchBudget {
  readonly maxRedispatches: number;
  readonly minSpanMs?: number | undefined;
}

/**
 * Whether the harness must stop re-dispatching: the one home of the rule (see
 * {@link DEFAULT_REDISPATCH_MIN_SPAN_MS} and {@link REDISPATCH_HARD_CAP_FACTOR}). A budget of 0 never
 * re-dispatches.
 */
export function redispatchBudgetSpent(c: RedispatchCount, b: RedispatchBudget): boolean {
  if (c.count < b.maxRedispatches) return false;
  return (
    b.maxRedispatches === 0 ||
    c.spanMs >= (b.minSpanMs ?? DEFAULT_REDISPATCH_MIN_SPAN_MS) ||
    c.count >= REDISPATCH_HARD_CAP_FACTOR * b.maxRedispatches
  );
}

/**
 * How many times the harness has re-dispatched this step (NOT_EXECUTED → INTENDED with no person as actor)
 * since a person last acted on it (any event of the step with an actor: an approval, a case resolved), and
 * how old the first of those is. Locks the step's row first, so the count cannot change before the
 * caller's decision commits. Reads through `step_events_pkey (run_id, id)` (one run's events).
 */
export async function countRedispatches(
  trx: SagaTrx,
  runId: string,
  stepIdx: number,
): Promise<RedispatchCount> {
  await trx
    .selectFrom('saga_log')
    .select('status')
    .where('run_id', '=', runId)
    .where('step_idx', '=', stepIdx)
    .forUpdate()
    .executeTakeFirst();
  const r = await sql<{ n: number; span_ms: number }>`
    SELECT count(*)::int AS n,
           coalesce(floor(extract(epoch FROM now() - min(e.at)) * 1000), 0)::float8 AS span_ms
      FROM step_events e
     WHERE e.run_id = ${runId} AND e.step_idx = ${stepIdx}
       AND e.kind = ${StepEventKind.TRANSITION}
       AND e.from_status = ${StepStatus.NOT_EXECUTED} AND e.to_status = ${StepStatus.INTENDED}
       AND e.actor IS NULL
       AND e.id > coalesce((SELECT max(p.id) FROM step_events p
                             WHERE p.run_id = ${runId} AND p.step_idx = ${stepIdx} AND p.actor IS NOT NULL), 0)`.execute(
    trx,
  );
  return { count: r.rows[0]?.n ?? 0, spanMs: Number(r.rows[0]?.span_ms ?? 0) };
}

export interface GiveUpInput {
  readonly runId: string;
  readonly stepIdx: number;
  /** Re-dispatches already made (the budget). */
  readonly redispatches: number;
  readonly maxRedispatches: number;
  /** What proved the last attempt absent (the cause the caller would have re-dispatched with). */
  readonly cause: string;
  readonly schema: string;
}

/**
 * Ends the re-dispatching of a poison step, in the caller's transaction: NOT_EXECUTED →
 * MANUAL_INTERVENTION by compare-and-set, and one open case whose evidence lists every dispatch of the step
 * (job id, number, when written and published), every attempt an executor made, and every time it came
 * back NOT_EXECUTED (when, and the evidence that proved it). Nothing is enqueued.
 */
export async function giveUpRedispatching(trx: SagaTrx, g: GiveUpInput): Promise<StepRow> {
  const step = await trx
    .selectFrom('saga_log')
    .selectAll()
    .where('run_id', '=', g.runId)
    .where('step_idx', '=', g.stepIdx)
    .executeTakeFirstOrThrow();
  const dispatches = await trx
    .selectFrom('outbox')
    .select(['job_id', 'payload', 'created_at', 'published_at'])
    .where('idempotency_key', '=', step.idempotency_key)
    .orderBy('id')
    .execute();
  const events = await trx
    .selectFrom('step_events')
    .select(['kind', 'from_status', 'to_status', 'cause', 'detail', 'at'])
    .where('run_id', '=', g.runId)
    .where('step_idx', '=', g.stepIdx)
    .where((eb) =>
      eb.or([
        eb('kind', '=', StepEventKind.ATTEMPT),
        eb.and([eb('kind', '=', StepEventKind.TRANSITION), eb('to_status', '=', StepStatus.NOT_EXECUTED)]),
      ]),
    )
    .orderBy('id')
    .execute();
  const evidence = {
    key: step.idempotency_key,
    tool: step.tool,
    redispatches: g.redispatches,
    maxRedispatches: g.maxRedispatches,
    lastCause: g.cause,
    dispatches: dispatches.map((d) => ({
      jobId: d.job_id,
      dispatchNo: (d.payload as { dispatchNo?: unknown }).dispatchNo ?? null,
      createdAt: d.created_at,
      publishedAt: d.published_at,
    })),
    attempts: events
      .filter((e) => e.kind === StepEventKind.ATTEMPT)
      .map((e) => ({ at: e.at, cause: e.cause, detail: e.detail })),
    cameBack: events
      .filter((e) => e.kind === StepEventKind.TRANSITION)
      .map((e) => ({ at: e.at, from: e.from_status, cause: e.cause, detail: e.detail })),
  };
  const reason =
    `step ${g.stepIdx} (${step.tool}): re-dispatched ${g.redispatches} times, each attempt proven never ` +
    `to have reached the system; not sent again (re-dispatch budget ${g.maxRedispatches})`;
  const row = await transitionStep(trx, {
    runId: g.runId,
    stepIdx: g.stepIdx,
    to: StepStatus.MANUAL_INTERVENTION,
    onlyFrom: [StepStatus.NOT_EXECUTED],
    cause: `re-dispatch budget spent: ${g.cause}`,
    detail: { redispatches: g.redispatches, maxRedispatches: g.maxRedispatches },
    patch: { lease_until: null, lease_owner: null },
    schema: g.schema,
  });
  await openCase(trx, { runId: g.runId, stepIdx: g.stepIdx, tenantId: step.tenant_id, reason, evidence });
  return row;
}
