/**
 * What the saga log says at the end of a soak, read straight from the soak's schema: every run with its
 * status, every step with its status, attempts and the outbox messages that carried it (so a stranded
 * intent shows whether it was ever published, and under which job id), every compensation, and the open
 * cases (what a person would be asked to settle).
 */
import { TERMINAL_RUN_STATUSES, type SagaDb } from '@agent-saga/core';
import { sleep } from './seeded-random.js';

export interface LoggedStep {
  readonly runId: string;
  readonly stepIdx: number;
  readonly tool: string;
  readonly status: string;
  readonly attempts: number;
  readonly idempotencyKey: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly outbox: readonly { readonly jobId: string; readonly publishedAt: Date | null }[];
  /** Lookups by key the reconciler or compensator made for it (step events of kind `lookup`). */
  readonly lookups: number;
  /** The step's last event: its kind and cause (who touched it last, and why). */
  readonly lastEvent: string | null;
}

export interface LoggedRun {
  readonly runId: string;
  readonly status: string;
  readonly statusReason: string | null;
}

export interface LoggedCompensation {
  readonly runId: string;
  readonly stepIdx: number;
  readonly tool: string | null;
  readonly status: string;
  readonly attempts: number;
  readonly idempotencyKey: string | null;
}

export interface SagaLogView {
  readonly runs: ReadonlyMap<string, LoggedRun>;
  readonly steps: readonly LoggedStep[];
  readonly compensations: readonly LoggedCompensation[];
  readonly openCases: readonly {
    readonly runId: string;
    readonly stepIdx: number | null;
    readonly reason: string;
  }[];
}

const TERMINAL: readonly string[] = TERMINAL_RUN_STATUSES;

/** Waits (polling every second, at most until `deadline`) until none of `runIds` is still moving. */
export async function waitForTerminalRuns(
  db: SagaDb,
  runIds: readonly string[],
  deadline: number,
  stopping: () => boolean,
  progress: (moving: number) => void,
): Promise<void> {
  let last = -1;
  while (!stopping()) {
    const moving = await db
      .selectFrom('runs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('run_id', 'in', runIds)
      .where('status', 'not in', [...TERMINAL_RUN_STATUSES])
      .executeTakeFirst()
      .then(
        (r) => Number(r?.n ?? 0),
        () => -1,
      );
    const created = await db
      .selectFrom('runs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('run_id', 'in', runIds)
      .executeTakeFirst()
      .then(
        (r) => Number(r?.n ?? 0),
        () => -1,
      );
    const notYet = moving < 0 || created < 0 ? -1 : moving + (runIds.length - created);
    if (notYet === 0) return;
    if (notYet !== last) progress(notYet);
    last = notYet;
    if (Date.now() > deadline) return;
    await sleep(1_000);
  }
}

/** Reads the whole log of the soak's runs. */
export async function readSagaLog(db: SagaDb, runIds: readonly string[]): Promise<SagaLogView> {
  const [runs, steps, outbox, compensations, cases, events] = await Promise.all([
    db
      .selectFrom('runs')
      .select(['run_id', 'status', 'status_reason'])
      .where('run_id', 'in', runIds)
      .execute(),
    db
      .selectFrom('saga_log')
      .select([
        'run_id',
        'step_idx',
        'tool',
        'status',
        'attempts',
        'idempotency_key',
        'created_at',
        'updated_at',
      ])
      .where('run_id', 'in', runIds)
      .orderBy('run_id')
      .orderBy('step_idx')
      .execute(),
    db
      .selectFrom('outbox')
      .select(['run_id', 'step_idx', 'job_id', 'published_at'])
      .where('run_id', 'in', runIds)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('compensations')
      .select(['run_id', 'step_idx', 'tool', 'status', 'attempts', 'idempotency_key'])
      .where('run_id', 'in', runIds)
      .execute(),
    db
      .selectFrom('cases')
      .select(['run_id', 'step_idx', 'reason'])
      .where('run_id', 'in', runIds)
      .where('status', '=', 'open')
      .execute(),
    db
      .selectFrom('step_events')
      .select(['run_id', 'step_idx', 'kind', 'cause'])
      .where('run_id', 'in', runIds)
      .where('step_idx', 'is not', null)
      .orderBy('id')
      .execute(),
  ]);
  const lookupsOf = new Map<string, number>();
  const lastOf = new Map<string, string>();
  for (const e of events) {
    const k = `${e.run_id}#${String(e.step_idx)}`;
    if (e.kind === 'lookup') lookupsOf.set(k, (lookupsOf.get(k) ?? 0) + 1);
    lastOf.set(k, `${e.kind}: ${e.cause}`);
  }
  const outboxOf = new Map<string, { jobId: string; publishedAt: Date | null }[]>();
  for (const o of outbox) {
    const k = `${o.run_id}#${o.step_idx}`;
    outboxOf.set(k, [...(outboxOf.get(k) ?? []), { jobId: o.job_id, publishedAt: o.published_at }]);
  }
  return {
    runs: new Map(
      runs.map((r) => [r.run_id, { runId: r.run_id, status: r.status, statusReason: r.status_reason }]),
    ),
    steps: steps.map((s) => ({
      runId: s.run_id,
      stepIdx: s.step_idx,
      tool: s.tool,
      status: s.status,
      attempts: s.attempts,
      idempotencyKey: s.idempotency_key,
      createdAt: s.created_at,
      updatedAt: s.updated_at,
      outbox: outboxOf.get(`${s.run_id}#${s.step_idx}`) ?? [],
      lookups: lookupsOf.get(`${s.run_id}#${s.step_idx}`) ?? 0,
      lastEvent: lastOf.get(`${s.run_id}#${s.step_idx}`) ?? null,
    })),
    compensations: compensations.map((c) => ({
      runId: c.run_id,
      stepIdx: c.step_idx,
      tool: c.tool,
      status: c.status,
      attempts: c.attempts,
      idempotencyKey: c.idempotency_key,
    })),
    openCases: cases.map((c) => ({ runId: c.run_id, stepIdx: c.step_idx, reason: c.reason })),
  };
}

/** Whether a run status is terminal. */
export const isTerminal = (status: string): boolean => TERMINAL.includes(status);
