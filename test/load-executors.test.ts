/**
 * A few hundred concurrent calls across several runs, through two relays and two executor processes:
 * every step CONFIRMED after one attempt, and every effect made exactly once (counted in the fixture
 * system, per key).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { StepStatus } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { closeFixtureTestEnv, createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { createIntent, startRole, waitFor, type RoleProcess } from './fixtures/dispatcher-processes.js';

const RUNS = 20;
const STEPS_PER_RUN = 15;
const TOTAL = RUNS * STEPS_PER_RUN;

let env: TestEnv;
let fx: Kysely<unknown>;
const procs: RoleProcess[] = [];

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('load'));
  const roleEnv = { EXECUTOR_CONCURRENCY: '25', RELAY_BATCH_SIZE: '25' };
  procs.push(
    startRole(env, 'relay', roleEnv),
    startRole(env, 'relay', roleEnv),
    startRole(env, 'executor', roleEnv),
    startRole(env, 'executor', roleEnv),
  );
  // Four tsx processes starting at once on a small machine (beside other test files) take a while.
  await waitFor(
    'roles started',
    () => (procs.every((p) => / started"/.test(p.output())) ? true : undefined),
    55_000,
    200,
  );
}, 60_000);
afterAll(() => closeFixtureTestEnv(env, procs));

describe('load', () => {
  it(`${TOTAL} concurrent calls over ${RUNS} runs, 2 relays, 2 executors: every effect exactly once`, async () => {
    const t0 = Date.now();
    // All runs at once; within a run, steps are parallel tool calls of one turn (explicit indices).
    await Promise.all(
      Array.from({ length: RUNS }, (_, r) =>
        Promise.all(
          Array.from({ length: STEPS_PER_RUN }, (_, s) =>
            createIntent(env, {
              runId: `load-${r}`,
              stepIdx: s,
              tool: s % 3 === 0 ? 'send_notice' : 'create_note',
              args:
                s % 3 === 0
                  ? { to: `c${r}@example.com`, text: `n${s}` }
                  : { orderId: `${r}-${s}`, text: 't' },
            }),
          ),
        ),
      ),
    );
    const created = Date.now() - t0;
    const settled = await waitFor(
      'every step settled',
      async () => {
        const r = await sql<{ status: string; n: string }>`
          SELECT status, count(*) AS n FROM saga_log GROUP BY status`.execute(env.db);
        const by = Object.fromEntries(r.rows.map((x) => [x.status, Number(x.n)]));
        return (by[StepStatus.INTENDED] ?? 0) === 0 && Object.values(by).reduce((a, b) => a + b, 0) === TOTAL
          ? by
          : undefined;
      },
      45_000,
      200,
    );
    const elapsed = Date.now() - t0;
    expect(settled).toEqual({ [StepStatus.CONFIRMED]: TOTAL });

    const perKey = await sql<{ key: string; n: string }>`
      SELECT l.idempotency_key AS key, count(e.id) AS n
        FROM saga_log l LEFT JOIN fixture_effects e ON e.key = l.idempotency_key
       GROUP BY l.idempotency_key`.execute(fx);
    expect(perKey.rows).toHaveLength(TOTAL);
    expect(perKey.rows.filter((r) => Number(r.n) !== 1)).toEqual([]);
    const total = await sql<{ n: string }>`SELECT count(*) AS n FROM fixture_effects`.execute(fx);
    expect(Number(total.rows[0]?.n)).toBe(TOTAL);

    const attempts = await sql<{ max: number }>`SELECT max(attempts) AS max FROM saga_log`.execute(env.db);
    expect(attempts.rows[0]?.max).toBe(1);
    // Both executor processes took part.
    const workers = await sql<{ n: string }>`
      SELECT count(DISTINCT detail->>'worker') AS n FROM step_events WHERE kind = 'attempt'`.execute(env.db);
    expect(Number(workers.rows[0]?.n)).toBe(2);
    console.log(`load: ${TOTAL} intents written in ${created} ms, all settled after ${elapsed} ms`);
  });
});
