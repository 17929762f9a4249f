/**
 * A reconciler SIGKILLed in the middle of a step (during the re-check pause, after its first lookup): it
 * wrote nothing but its claim. No other reconciler touches the row while that reconcile lease lives; once it
 * has run out, another settles the step, once. And the sweep reads the unsettled rows through the partial
 * index, not the whole log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { StepEventKind, StepStatus } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { createFixtureTestEnv } from '../../../test/fixtures/fixture-test-env.js';
import { eventsOf, waitFor, waitForStatus } from '../../../test/fixtures/dispatcher-processes.js';
import {
  mustRead,
  startReconciler,
  unknownStep,
  waitForLog,
  type ReconcilerProcess,
} from './reconciler-harness.js';

let env: TestEnv;
let fx: Kysely<unknown>;
const procs: ReconcilerProcess[] = [];

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('reconcrash'));
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
  await env?.close();
});

describe('reconciler crash', () => {
  it('a row claimed by a dead reconciler waits for its lease, then is settled once by another', async () => {
    // A long re-check pause: the first reconciler is killed while it waits to look again.
    const first = startReconciler(env, { LOOKUP_RECHECK_MS: '4000' });
    procs.push(first);
    await waitForLog(first, 'reconciler started');
    // Sent long ago: the first lookup is believable, so the first reconciler pauses to re-check (and is
    // killed there) instead of recording a too-early look.
    const s = await unknownStep(env, 'run-crash', { attemptedAgoMs: 10_000 });
    const claimed = await waitFor('the claim', async () => {
      const row = await mustRead(env, s.key);
      return row.reconcile_lease_owner ? row : undefined;
    });
    await first.stop('SIGKILL');
    // Lease: two lookup timeouts (1 s each) + the 4 s pause + a 1 s margin.
    const leaseEnds = claimed.reconcile_lease_until!.getTime();

    const second = startReconciler(env);
    procs.push(second);
    // Why 45 s: the lease (about 7 s) plus a second reconciler's boot, which a loaded machine stretches.
    const done = await waitForStatus(env.db, s.key, [StepStatus.INTENDED], 45_000).catch((e: unknown) => {
      throw new Error(`${String(e)}\nsecond reconciler:\n${second.output().slice(-3000)}`);
    });
    expect(done.attempts).toBe(1); // re-dispatched; no relay here, so not yet sent again

    const events = await eventsOf(env.db, s.runId, s.stepIdx);
    const lookups = events.filter((e) => e.kind === StepEventKind.LOOKUP);
    const by = new Set(lookups.map((l) => (l.detail as { reconciler: string }).reconciler));
    expect(by.size).toBe(1);
    expect([...by][0]).not.toBe(claimed.reconcile_lease_owner);
    expect(lookups[0]!.at.getTime()).toBeGreaterThanOrEqual(leaseEnds - 50);
    expect(events.filter((e) => e.from_status === 'UNKNOWN')).toHaveLength(1);
  });

  it('sweeps through the partial index of unsettled rows', async () => {
    await sql`INSERT INTO runs (run_id, tenant_id, status) VALUES ('bulk', 'acme', 'COMPLETED')`.execute(fx);
    await sql`
      INSERT INTO saga_log (run_id, step_idx, tenant_id, tool, tool_class, tool_version, idempotency_key, args,
                            payload_hash, status)
      SELECT 'bulk', g, 'acme', 'create_note', 'compensatable', 1, 'bulk-' || g, '{}', 'h', 'CONFIRMED'
        FROM generate_series(1, 20000) g`.execute(fx);
    await sql`ANALYZE saga_log`.execute(fx);
    const plan = await sql<{ 'QUERY PLAN': string }>`
      EXPLAIN SELECT run_id, step_idx FROM saga_log
       WHERE status IN ('INTENDED', 'UNKNOWN')
         AND (status = 'UNKNOWN' OR lease_until < now())
         AND (next_reconcile_at IS NULL OR next_reconcile_at <= now())
         AND (reconcile_lease_until IS NULL OR reconcile_lease_until < now())
       ORDER BY lease_until NULLS FIRST, updated_at LIMIT 8 FOR UPDATE SKIP LOCKED`.execute(fx);
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('saga_log_unsettled');
  });
});
