/**
 * The saga log brings back what Redis loses: an INTENDED step no executor claimed within the bound after
 * its publish is published again under a fresh job id, once, whoever sweeps; the claim stays the one guard
 * against running it twice; the unclaimed-intent gauges; and the plans of both reads on a log full of
 * settled rows.
 */
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimStep,
  registerSagaLogGauges,
  REPUBLISH_CAUSE,
  republishUnclaimedIntents,
  SagaLogGaugeGroup,
  StepStatus,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { intendedStep, stepOfKey } from './intended-step.js';
import { unclaimedIntentsQuery } from '../src/metrics/read-backlog-gauges.js';
import { lockUnclaimedIntents } from '../src/outbox/republish-unclaimed-intents.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('unclaimed');
});
afterAll(async () => env?.close());

const BOUND_MS = 20_000;

/** An INTENDED step whose intake committed `ageSecs` ago (by the database's clock). */
async function intent(runId: string, ageSecs: number) {
  const row = await intendedStep(env, runId);
  await sql`UPDATE saga_log SET created_at = now() - make_interval(secs => ${ageSecs}),
                                updated_at = now() - make_interval(secs => ${ageSecs})
             WHERE idempotency_key = ${row.idempotency_key}`.execute(env.db);
  await sql`UPDATE outbox SET created_at = now() - make_interval(secs => ${ageSecs})
             WHERE idempotency_key = ${row.idempotency_key}`.execute(env.db);
  return row.idempotency_key;
}

/** The relay marked the step's latest dispatch published `ageSecs` ago. */
const published = (key: string, ageSecs: number) =>
  sql`UPDATE outbox SET published_at = now() - make_interval(secs => ${ageSecs})
       WHERE id = (SELECT max(id) FROM outbox WHERE idempotency_key = ${key})`.execute(env.db);

const outboxOf = (key: string) =>
  env.db
    .selectFrom('outbox')
    .select(['job_id', 'payload', 'published_at'])
    .select(sql<boolean>`relay_after <= now()`.as('due'))
    .where('idempotency_key', '=', key)
    .orderBy('id')
    .execute();

const republish = () => republishUnclaimedIntents(env.db, { olderThanMs: BOUND_MS, schema: env.schema });

/** Settles every step left by an earlier test, so each test sees only its own candidates. */
const settleAll = () =>
  sql`UPDATE saga_log SET status = ${StepStatus.CONFIRMED} WHERE status = ${StepStatus.INTENDED}`.execute(
    env.db,
  );

describe('republishUnclaimedIntents', () => {
  it('publishes a lost intent again under the next dispatch number, once per publish', async () => {
    await settleAll();
    const key = await intent('lost-1', 60);
    await published(key, 30);

    const first = await republish();
    expect(first).toEqual([
      expect.objectContaining({ key, dispatchNo: 2, jobId: `${key}-d2`, republishes: 1 }),
    ]);
    expect(first[0]!.unclaimedSeconds).toBeGreaterThan(55);
    const msgs = await outboxOf(key);
    expect(msgs.map((m) => m.job_id)).toEqual([key, `${key}-d2`]);
    // Due at once for the relays, and not yet published.
    expect(msgs[1]).toMatchObject({ published_at: null, due: true, payload: { key, dispatchNo: 2 } });
    const events = await env.db
      .selectFrom('step_events')
      .selectAll()
      .where('run_id', '=', 'lost-1')
      .where('cause', '=', REPUBLISH_CAUSE)
      .execute();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      from_status: 'INTENDED',
      to_status: 'INTENDED',
      detail: { dispatchNo: 2, jobId: `${key}-d2`, previousJobId: key, attempts: 0 },
    });

    // The new message is the relays' until they publish it: nothing more while it is unpublished, nor
    // while it was published within the bound.
    expect(await republish()).toEqual([]);
    await published(key, 5);
    expect(await republish()).toEqual([]);
    // Published past the bound and still unclaimed: once more, with the next number.
    await published(key, 25);
    expect(await republish()).toEqual([
      expect.objectContaining({ key, dispatchNo: 3, jobId: `${key}-d3`, republishes: 2 }),
    ]);

    // The step row is untouched: its age (the gauge's) still counts from the intake.
    const row = await env.db
      .selectFrom('saga_log')
      .selectAll()
      .where('idempotency_key', '=', key)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'INTENDED', attempts: 0, lease_until: null });

    // Whichever job arrives claims it once; every other delivery finds the lease and runs nothing.
    const at = { runId: row.run_id, stepIdx: row.step_idx };
    const claims = await Promise.all(
      [key, `${key}-d2`, `${key}-d3`].map((jobId, i) =>
        claimStep(env.db, { ...at, key, worker: `w${i}`, leaseMs: 10_000, jobId, schema: env.schema }),
      ),
    );
    expect(claims.filter((c) => c.kind === 'claimed')).toHaveLength(1);
    expect(claims.filter((c) => c.kind === 'held')).toHaveLength(2);
    const claimed = await env.db
      .selectFrom('saga_log')
      .select('attempts')
      .where('idempotency_key', '=', key)
      .executeTakeFirstOrThrow();
    expect(claimed.attempts).toBe(1);
    // Claimed: never republished again.
    await published(key, 60);
    expect(await republish()).toEqual([]);
  });

  it('leaves claimed, fresh, unpublished and unsettled-but-not-intended steps alone', async () => {
    await settleAll();
    const claimed = await intent('keep-claimed', 60);
    await published(claimed, 30);
    expect(
      (
        await claimStep(env.db, {
          ...(await stepOfKey(env, claimed)),
          key: claimed,
          worker: 'w',
          leaseMs: 100,
          jobId: claimed,
          schema: env.schema,
        })
      ).kind,
    ).toBe('claimed');
    // Its lease then lapses: the reconciler's (lookup), not a republish.
    await sql`UPDATE saga_log SET lease_until = now() - interval '1 minute' WHERE idempotency_key = ${claimed}`.execute(
      env.db,
    );

    const fresh = await intent('keep-fresh', 60);
    await published(fresh, 5);
    const unpublished = await intent('keep-unpublished', 60); // the relays' to publish
    const unknown = await intent('keep-unknown', 60);
    await published(unknown, 30);
    await sql`UPDATE saga_log SET status = ${StepStatus.UNKNOWN} WHERE idempotency_key = ${unknown}`.execute(
      env.db,
    );

    expect(await republish()).toEqual([]);
    for (const key of [claimed, fresh, unpublished, unknown]) expect(await outboxOf(key)).toHaveLength(1);
  });

  it('republishes a step once when several reconcilers sweep at once', async () => {
    for (let round = 0; round < 5; round++) {
      await settleAll();
      const key = await intent(`race-${round}`, 60);
      await published(key, 30);
      const swept = await Promise.all([republish(), republish(), republish()]);
      expect(swept.flat().map((r) => r.key)).toEqual([key]);
      expect(await outboxOf(key)).toHaveLength(2);
    }
  });

  it('works off a large backlog in bounded batches, oldest first', async () => {
    await settleAll();
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) {
      const key = await intent(`batch-${i}`, 100 - i);
      await published(key, 30);
      keys.push(key);
    }
    const first = await republishUnclaimedIntents(env.db, {
      olderThanMs: BOUND_MS,
      limit: 3,
      schema: env.schema,
    });
    expect(first.map((r) => r.key)).toEqual(keys.slice(0, 3));
    const second = await republishUnclaimedIntents(env.db, {
      olderThanMs: BOUND_MS,
      limit: 3,
      schema: env.schema,
    });
    expect(second.map((r) => r.key)).toEqual(keys.slice(3));
  });
});

describe('unclaimed-intent gauges', () => {
  it('report the unclaimed intents and the age of the oldest, which a republish does not reset', async () => {
    await settleAll();
    const old = await intent('gauge-old', 300);
    await published(old, 250);
    await intent('gauge-new', 2);
    const claimed = await intent('gauge-claimed', 900);
    await claimStep(env.db, {
      ...(await stepOfKey(env, claimed)),
      key: claimed,
      worker: 'w',
      leaseMs: 10_000,
      jobId: claimed,
      schema: env.schema,
    });

    const read = async () => {
      const registry = new Registry();
      registerSagaLogGauges(registry, env.db, { groups: [SagaLogGaugeGroup.UNCLAIMED_INTENTS] });
      const m = new Map((await registry.getMetricsAsJSON()).map((x) => [x.name, x.values[0]?.value]));
      return {
        count: m.get('saga_unclaimed_intents'),
        age: m.get('saga_oldest_unclaimed_intent_age_seconds'),
      };
    };
    const before = await read();
    expect(before.count).toBe(2);
    expect(before.age).toBeGreaterThan(295);
    expect(before.age).toBeLessThan(330);

    expect(await republish()).toHaveLength(1);
    const after = await read();
    expect(after.count).toBe(2);
    expect(after.age).toBeGreaterThanOrEqual(before.age!);

    await settleAll();
    expect(await read()).toEqual({ count: 0, age: 0 });
  });
});

describe('plans on a log of settled rows', () => {
  it('read unsettled rows only: saga_log_unsettled and outbox_by_key, no scan of the log or the outbox', async () => {
    await sql`INSERT INTO runs (run_id, tenant_id, status) VALUES ('bulk', 'acme', 'COMPLETED')`.execute(
      env.db,
    );
    await sql`
      INSERT INTO saga_log (run_id, step_idx, tenant_id, tool, tool_class, tool_version, idempotency_key, args,
                            payload_hash, status, updated_at)
      SELECT 'bulk', g, 'acme', 'create_note', 'compensatable', 1, 'bulk-' || g, '{}', 'h', 'CONFIRMED',
             now() - interval '1 day'
        FROM generate_series(1, 20000) g`.execute(env.db);
    await sql`
      INSERT INTO outbox (topic, run_id, step_idx, idempotency_key, job_id, payload, published_at)
      SELECT 'execute', 'bulk', g, 'bulk-' || g, 'bulk-' || g, '{}', now() - interval '1 day'
        FROM generate_series(1, 20000) g`.execute(env.db);
    await sql`ANALYZE saga_log`.execute(env.db);
    await sql`ANALYZE outbox`.execute(env.db);
    const explain = async (q: ReturnType<typeof sql>) =>
      (await sql<{ 'QUERY PLAN': string }>`EXPLAIN ${q}`.execute(env.db)).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');

    const republishPlan = await explain(lockUnclaimedIntents(BOUND_MS, 100));
    expect(republishPlan).toContain('saga_log_unsettled');
    expect(republishPlan).toContain('outbox_by_key');
    expect(republishPlan).not.toMatch(/Seq Scan on (saga_log|outbox)/);

    const gaugePlan = await explain(unclaimedIntentsQuery());
    expect(gaugePlan).toContain('saga_log_unsettled');
    expect(gaugePlan).not.toMatch(/Seq Scan on saga_log/);
  });
});
