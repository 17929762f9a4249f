/**
 * Two reconciler processes racing on 100 UNKNOWN steps (half of them with their effect in the fixture
 * system, half without): every step is worked by exactly one of them (its lookups come from one reconciler
 * and it leaves UNKNOWN by exactly one transition), both do part of the work, and the gauges of stuck runs
 * and stale outbox messages show what was left behind (no relay runs here, so the re-dispatched messages
 * stay unpublished).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { StepEventKind, StepStatus } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { createFixtureTestEnv } from '../../../test/fixtures/fixture-test-env.js';
import { waitFor } from '../../../test/fixtures/dispatcher-processes.js';
import { freePort } from '@agent-saga/core';
import {
  scrape,
  startReconciler,
  unknownStep,
  waitForLog,
  type ReconcilerProcess,
  type UnsettledStep,
} from './reconciler-harness.js';

const STEPS = 100;
let env: TestEnv;
let fx: Kysely<unknown>;
const ports: number[] = [];
const reconcilers: ReconcilerProcess[] = [];
const steps: { step: UnsettledStep; hasEffect: boolean }[] = [];

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('reconrace'));
  for (let i = 0; i < STEPS; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: 10 }, async (_, j) => {
        const hasEffect = (i + j) % 2 === 0;
        // Sent long ago (past the horizon and lag): each step's lookups are exactly those of its verdict,
        // however long the set-up took, so the counts below measure who worked it, not the clock.
        const step = await unknownStep(env, `race-${i + j}`, {
          effects: hasEffect ? 1 : 0,
          attemptedAgoMs: 60_000,
        });
        return { step, hasEffect };
      }),
    );
    steps.push(...batch);
  }
  // Three runs nobody has touched for two minutes: stuck past RECONCILER_STUCK_RUN_MS.
  await sql`UPDATE runs SET updated_at = now() - interval '2 minutes' WHERE run_id IN ('race-0', 'race-1', 'race-2')`.execute(
    fx,
  );
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    ports.push(port);
    reconcilers.push(
      startReconciler(env, {
        RECONCILER_SWEEP_MS: '100',
        RECONCILER_CONCURRENCY: '8',
        LOOKUP_RECHECK_MS: '200',
        RECONCILER_STUCK_RUN_MS: '60000',
        RECONCILER_STALE_OUTBOX_MS: '500',
        RECONCILER_SCAN_MS: '500',
        METRICS_PORT: String(port),
      }),
    );
  }
  await Promise.all(reconcilers.map((r) => waitForLog(r, 'reconciler started')));
});
afterAll(async () => {
  await Promise.all(reconcilers.map((r) => r.stop('SIGKILL')));
  await env?.close();
});

describe('two reconcilers on the same log', () => {
  it('settle every step once: one reconciler per step, one transition out of UNKNOWN', async () => {
    await waitFor(
      'every step settled',
      async () => {
        const r = await sql<{ n: string }>`
          SELECT count(*) AS n FROM saga_log WHERE status = ${StepStatus.UNKNOWN}`.execute(fx);
        return Number(r.rows[0]!.n) === 0 ? true : undefined;
      },
      40_000,
      200,
    );
    const events = await env.db
      .selectFrom('step_events')
      .selectAll()
      .where('kind', 'in', [StepEventKind.TRANSITION, StepEventKind.LOOKUP])
      .orderBy('id')
      .execute();
    const byRun = new Map<string, typeof events>();
    for (const e of events) byRun.set(e.run_id, [...(byRun.get(e.run_id) ?? []), e]);
    const workers = new Set<string>();
    for (const { step, hasEffect } of steps) {
      const mine = byRun.get(step.runId) ?? [];
      const outOfUnknown = mine.filter(
        (e) => e.kind === StepEventKind.TRANSITION && e.from_status === 'UNKNOWN',
      );
      expect(outOfUnknown, step.runId).toHaveLength(1);
      expect(outOfUnknown[0]!.to_status).toBe(hasEffect ? 'CONFIRMED' : 'NOT_EXECUTED');
      const lookups = mine.filter((e) => e.kind === StepEventKind.LOOKUP);
      expect(lookups, step.runId).toHaveLength(hasEffect ? 1 : 2);
      const by = new Set(lookups.map((l) => (l.detail as { reconciler: string }).reconciler));
      expect(by.size, step.runId).toBe(1);
      workers.add([...by][0]!);
    }
    // Both processes took part.
    expect(workers.size).toBe(2);

    // Found: CONFIRMED. Proved absent: re-dispatched once (a second outbox message), INTENDED again.
    const rows = await env.db.selectFrom('saga_log').select(['run_id', 'status']).execute();
    const status = new Map(rows.map((r) => [r.run_id, r.status]));
    for (const { step, hasEffect } of steps)
      expect(status.get(step.runId)).toBe(hasEffect ? 'CONFIRMED' : 'INTENDED');
    const outbox = await sql<{ n: string }>`
      SELECT count(*) AS n FROM outbox WHERE (payload->>'dispatchNo')::int = 2`.execute(fx);
    expect(Number(outbox.rows[0]!.n)).toBe(STEPS / 2);

    const total = async (outcome: string) =>
      (await Promise.all(ports.map((p) => scrape(p, 'saga_reconcile_results_total', { outcome })))).reduce(
        (a, b) => a + b,
      );
    expect(await total('confirmed')).toBe(STEPS / 2);
    expect(await total('not_executed')).toBe(STEPS / 2);
    expect(await total('superseded')).toBe(0);
  });

  it('expose stuck runs and stale outbox messages as gauges, and log them', async () => {
    expect(await scrape(ports[0]!, 'saga_stuck_runs')).toBe(3);
    await waitFor('stale outbox messages', async () =>
      (await scrape(ports[1]!, 'saga_stale_outbox_messages')) === STEPS / 2 ? true : undefined,
    );
    await waitFor('the scan log lines', () => {
      const out = reconcilers.map((r) => r.output()).join('');
      return out.includes('runs stuck in a non-terminal state') &&
        out.includes('outbox messages unpublished past the threshold')
        ? true
        : undefined;
    });
  });

  it('both drain on SIGTERM', async () => {
    const exits = await Promise.all(reconcilers.map((r) => r.stop('SIGTERM')));
    expect(exits.map((e) => e.code)).toEqual([0, 0]);
  });
});
