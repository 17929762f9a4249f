import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApprovalKind,
  ApprovalStatus,
  Audience,
  CompensationStatus,
  CorrectionStatus,
  createDb,
  registerSagaLogGauges,
  ReviewStatus,
  RunStatus,
  SagaLogGaugeGroup,
  StepStatus,
  ToolClass,
  type RunStatus as RunStatusT,
  type StepStatus as StepStatusT,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';

let env: TestEnv;
const HOUR_MS = 3_600_000;

/** `now() - secs`, written by Postgres so ages are measured against its own clock. */
const ago = (secs: number) => sql<Date>`now() - make_interval(secs => ${secs})`;

async function run(runId: string, status: RunStatusT, idleSecs = 0, irreversibleBeforePivot = 0) {
  await env.db
    .insertInto('runs')
    .values({
      run_id: runId,
      tenant_id: 'acme',
      status,
      metadata: '{}',
      irreversible_before_pivot: irreversibleBeforePivot,
      updated_at: ago(idleSecs),
    })
    .execute();
}

async function step(runId: string, stepIdx: number, tool: string, status: StepStatusT, lastAttemptSecs = 0) {
  await env.db
    .insertInto('saga_log')
    .values({
      run_id: runId,
      step_idx: stepIdx,
      tenant_id: 'acme',
      tool,
      tool_class: ToolClass.COMPENSATABLE,
      tool_version: 1,
      idempotency_key: `${runId}:${stepIdx}:${tool}`,
      args: '{}',
      payload_hash: Buffer.from('h'),
      status,
      audience: [],
      last_attempt_at: ago(lastAttemptSecs),
    })
    .execute();
}

/** Every value of one metric in the registry's scrape, by its labels (`a=x,b=y`, or '' without labels). */
async function scrape(registry: Registry): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>();
  for (const m of await registry.getMetricsAsJSON()) {
    const values = new Map<string, number>();
    for (const v of m.values) {
      const labels = Object.entries(v.labels)
        .map(([k, l]) => `${k}=${l}`)
        .join(',');
      values.set(labels, v.value);
    }
    out.set(m.name, values);
  }
  return out;
}

beforeAll(async () => {
  env = await createTestEnv('gauges');
  await run('r-fresh', RunStatus.RUNNING);
  await run('r-idle', RunStatus.RUNNING, 2 * 3600);
  await run('r-waiting', RunStatus.AWAITING_APPROVAL, 1800);
  await run('r-done', RunStatus.COMPLETED, 0, 2);
  await run('r-undone', RunStatus.COMPENSATED);
  await run('r-partial', RunStatus.PARTIALLY_COMPENSATED, 0, 1);
  await run('r-manual', RunStatus.MANUAL_INTERVENTION);

  // Two UNKNOWN steps (the older sent ten minutes ago), one INTENDED (not unknown).
  await step('r-idle', 0, 'create_ticket', StepStatus.UNKNOWN, 600);
  await step('r-fresh', 0, 'create_ticket', StepStatus.UNKNOWN, 60);
  await step('r-fresh', 1, 'send_email', StepStatus.INTENDED);
  // A capture with its authorisation (fine), one whose authorisation FAILED (incident), one not settled.
  await step('r-done', 0, 'authorize_payment', StepStatus.CONFIRMED);
  await step('r-done', 1, 'capture_payment', StepStatus.CONFIRMED);
  await step('r-manual', 0, 'authorize_payment', StepStatus.FAILED);
  await step('r-manual', 1, 'capture_payment', StepStatus.CONFIRMED);
  await step('r-partial', 0, 'capture_payment', StepStatus.UNKNOWN, 30);
  await step('r-partial', 1, 'create_ticket', StepStatus.CONFIRMED);
  await step('r-partial', 2, 'send_email', StepStatus.CONFIRMED);
  await step('r-undone', 0, 'create_ticket', StepStatus.CONFIRMED);

  const outbox = (id: string, ageSecs: number, published: boolean) => ({
    topic: 'execute',
    run_id: 'r-fresh',
    step_idx: 1,
    idempotency_key: `r-fresh:1:${id}`,
    job_id: id,
    payload: '{}',
    created_at: ago(ageSecs),
    published_at: published ? new Date() : null,
  });
  await env.db
    .insertInto('outbox')
    .values([outbox('stale', 120, false), outbox('fresh', 1, false), outbox('old-published', 600, true)])
    .execute();

  const comp = (runId: string, stepIdx: number, status: CompensationStatus, attempts: number) => ({
    run_id: runId,
    step_idx: stepIdx,
    tenant_id: 'acme',
    tool: 'close_ticket',
    idempotency_key: `compensate:${runId}:${stepIdx}`,
    args: '{}',
    status,
    attempts,
  });
  await env.db
    .insertInto('compensations')
    .values([
      comp('r-partial', 1, CompensationStatus.FAILED, 4),
      comp('r-partial', 2, CompensationStatus.UNKNOWN, 1),
      comp('r-undone', 0, CompensationStatus.COMPENSATED, 6),
    ])
    .execute();

  const approval = (
    id: string,
    runId: string,
    kind: ApprovalKind,
    status: ApprovalStatus,
    ageSecs: number,
  ) => ({
    id,
    tenant_id: 'acme',
    run_id: runId,
    kind,
    status,
    hash: 'h',
    steps: [1],
    evidence: '{}',
    created_at: ago(ageSecs),
  });
  await env.db
    .insertInto('approvals')
    .values([
      {
        ...approval('a-pivot', 'r-waiting', ApprovalKind.PIVOT, ApprovalStatus.PENDING, 2 * 3600),
        expires_at: ago(-1800),
      },
      {
        ...approval('a-step', 'r-fresh', ApprovalKind.STEP, ApprovalStatus.PENDING, 600),
        expires_at: ago(-5 * 3600),
      },
      {
        ...approval('a-old', 'r-done', ApprovalKind.PIVOT, ApprovalStatus.APPROVED, 9000),
        expires_at: ago(0),
      },
    ])
    .execute();

  await env.db
    .insertInto('cases')
    .values([
      {
        run_id: 'r-manual',
        step_idx: 1,
        tenant_id: 'acme',
        reason: 'r',
        evidence: '{}',
        status: ReviewStatus.OPEN,
        created_at: ago(3600),
      },
      {
        run_id: 'r-partial',
        step_idx: 1,
        tenant_id: 'acme',
        reason: 'r',
        evidence: '{}',
        status: ReviewStatus.RESOLVED,
      },
    ])
    .execute();
  const correction = (runId: string, stepIdx: number, audience: string[], status: CorrectionStatus) => ({
    run_id: runId,
    step_idx: stepIdx,
    tenant_id: 'acme',
    command: '{}',
    audience,
    status,
  });
  await env.db
    .insertInto('corrections')
    .values([
      correction('r-partial', 2, [Audience.CUSTOMER], CorrectionStatus.OPEN),
      correction('r-partial', 1, [Audience.SUPPORT_TEAM], CorrectionStatus.OPEN),
      correction('r-undone', 0, [Audience.CUSTOMER], CorrectionStatus.DISMISSED),
    ])
    .execute();
});
afterAll(async () => env?.close());

describe('saga-log gauges', () => {
  it('reads every group from the log when scraped', async () => {
    const registry = new Registry();
    registerSagaLogGauges(registry, env.db, { stuckRunMs: HOUR_MS, staleOutboxMs: 60_000 });
    const m = await scrape(registry);
    const v = (name: string, labels = '') => m.get(name)?.get(labels);

    expect(v('saga_runs', `status=${RunStatus.RUNNING}`)).toBe(2);
    expect(v('saga_runs', `status=${RunStatus.COMPLETED}`)).toBe(1);
    expect(v('saga_runs', `status=${RunStatus.COMPENSATED}`)).toBe(1);
    expect(v('saga_runs', `status=${RunStatus.PARTIALLY_COMPENSATED}`)).toBe(1);
    expect(v('saga_runs', `status=${RunStatus.MANUAL_INTERVENTION}`)).toBe(1);
    expect(v('saga_runs', `status=${RunStatus.COMMITTED_WITH_REPAIR}`)).toBe(0);
    expect(v('saga_irreversible_before_pivot_steps')).toBe(3);

    expect(v('saga_stuck_runs', `status=${RunStatus.RUNNING}`)).toBe(1);
    expect(v('saga_stuck_runs', `status=${RunStatus.AWAITING_APPROVAL}`)).toBe(0);
    expect(v('saga_stuck_runs', `status=${RunStatus.COMPENSATING}`)).toBe(0);
    expect(v('saga_stuck_run_oldest_age_seconds', `status=${RunStatus.RUNNING}`)).toBeCloseTo(7200, -1);
    expect(v('saga_stuck_run_oldest_age_seconds', `status=${RunStatus.AWAITING_APPROVAL}`)).toBeCloseTo(
      1800,
      -1,
    );

    expect(v('saga_unknown_steps')).toBe(3);
    expect(v('saga_unknown_step_oldest_age_seconds')).toBeCloseTo(600, -1);
    expect(v('saga_stale_outbox_messages')).toBe(1);

    expect(v('saga_open_compensations', `status=${CompensationStatus.FAILED}`)).toBe(1);
    expect(v('saga_open_compensations', `status=${CompensationStatus.UNKNOWN}`)).toBe(1);
    expect(v('saga_open_compensations', `status=${CompensationStatus.PENDING}`)).toBe(0);
    expect(v('saga_open_compensation_max_attempts')).toBe(4);

    expect(v('saga_pending_approvals', `kind=${ApprovalKind.PIVOT}`)).toBe(1);
    expect(v('saga_pending_approvals', `kind=${ApprovalKind.STEP}`)).toBe(1);
    expect(v('saga_pending_approval_oldest_age_seconds', `kind=${ApprovalKind.PIVOT}`)).toBeCloseTo(7200, -1);
    expect(v('saga_pending_approval_next_expiry_seconds', `kind=${ApprovalKind.PIVOT}`)).toBeCloseTo(
      1800,
      -1,
    );
    expect(v('saga_pending_approval_next_expiry_seconds', `kind=${ApprovalKind.STEP}`)).toBeCloseTo(
      18000,
      -1,
    );

    expect(v('saga_open_cases')).toBe(1);
    expect(v('saga_open_case_oldest_age_seconds')).toBeCloseTo(3600, -1);
    expect(v('saga_open_corrections', 'audience=customer')).toBe(1);
    expect(v('saga_open_corrections', 'audience=internal')).toBe(1);

    expect(v('saga_captures_without_reservation', 'tool=capture_payment')).toBe(1);
    expect(m.get('saga_log_gauge_errors_total')?.size ?? 0).toBe(0);
  });

  it('registers only the groups asked for, and reuses a read for cacheMs', async () => {
    const registry = new Registry();
    registerSagaLogGauges(registry, env.db, {
      groups: [SagaLogGaugeGroup.UNKNOWN_STEPS],
      cacheMs: 60_000,
    });
    const names = registry.getMetricsAsArray().map((x) => x.name);
    expect(names.filter((n) => !n.startsWith('saga_log_gauge_')).sort()).toEqual([
      'saga_unknown_step_oldest_age_seconds',
      'saga_unknown_steps',
    ]);
    expect((await scrape(registry)).get('saga_unknown_steps')?.get('')).toBe(3);
    await env.db
      .updateTable('saga_log')
      .set({ status: StepStatus.CONFIRMED })
      .where('run_id', '=', 'r-idle')
      .execute();
    try {
      // Within cacheMs: the earlier read answers; a fresh registry reads the log again.
      expect((await scrape(registry)).get('saga_unknown_steps')?.get('')).toBe(3);
      const fresh = new Registry();
      registerSagaLogGauges(fresh, env.db, { groups: [SagaLogGaugeGroup.UNKNOWN_STEPS] });
      expect((await scrape(fresh)).get('saga_unknown_steps')?.get('')).toBe(2);
    } finally {
      await env.db
        .updateTable('saga_log')
        .set({ status: StepStatus.UNKNOWN })
        .where('run_id', '=', 'r-idle')
        .execute();
    }
  });

  it('answers the scrape when a read fails, counting the failure by group', async () => {
    // A pool on a schema without the saga log: every read fails with "relation does not exist".
    const broken = createDb({ url: env.databaseUrl, schema: 'no_saga_log_here', poolSize: 1 });
    try {
      const registry = new Registry();
      registerSagaLogGauges(registry, broken, {
        groups: [SagaLogGaugeGroup.UNKNOWN_STEPS, SagaLogGaugeGroup.APPROVALS],
      });
      const m = await scrape(registry);
      expect(m.get('saga_log_gauge_errors_total')?.get(`group=${SagaLogGaugeGroup.UNKNOWN_STEPS}`)).toBe(1);
      expect(m.get('saga_log_gauge_errors_total')?.get(`group=${SagaLogGaugeGroup.APPROVALS}`)).toBe(1);
      expect(m.get('saga_pending_approval_next_expiry_seconds')?.size).toBe(0);
    } finally {
      await broken.destroy();
    }
  });
});
