/**
 * The relay SIGKILLed at `after-publish-before-mark`: the job is in BullMQ, the outbox row is claimed (its
 * `relay_after` moved past the claim lease) but not marked. Once the lease ends, a restarted relay claims
 * the row again, publishes it again (a no-op thanks to jobId = key) and marks it; the tool runs once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { CrashPoint, StepStatus } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { bullmqConnection } from '@agent-saga/core';
import { createExecuteQueue } from '@agent-saga/dispatcher';
import { closeFixtureTestEnv, createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { effectsFor } from './fixtures/effect-tools.js';
import {
  createIntent,
  startRole,
  waitFor,
  waitForStatus,
  type RoleProcess,
} from './fixtures/dispatcher-processes.js';

let env: TestEnv;
let fx: Kysely<unknown>;
const procs: RoleProcess[] = [];

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('crashrelay'));
});
afterAll(() => closeFixtureTestEnv(env, procs));

describe('relay crash after publish, before mark', () => {
  it('republishes after a restart, and the tool runs once', async () => {
    const queue = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
    try {
      // A short claim lease, so the restarted relay may claim the row again soon after the crash.
      const crashing = startRole(env, 'relay', {
        SAGA_CRASH_POINTS: CrashPoint.AFTER_PUBLISH_BEFORE_MARK,
        RELAY_CLAIM_LEASE_MS: '1000',
      });
      procs.push(crashing);
      const row = await createIntent(env, {
        runId: 'run-relay-crash',
        stepIdx: 0,
        tool: 'create_note',
        args: { orderId: 'rc-1', text: 'crash me' },
      });
      const exit = await crashing.exited;
      expect(exit.signal).toBe('SIGKILL');
      expect(crashing.output()).toContain(`crash point reached: ${CrashPoint.AFTER_PUBLISH_BEFORE_MARK}`);

      // Published but not marked: the job waits in BullMQ, the outbox row is still unpublished.
      expect(await queue.getJob(row.idempotency_key)).toBeDefined();
      const before = await env.db
        .selectFrom('outbox')
        .selectAll()
        .where('run_id', '=', 'run-relay-crash')
        .execute();
      expect(before.map((o) => o.published_at)).toEqual([null]);

      // A restarted relay, once the dead relay's claim has lapsed, publishes the row again (no-op) and marks it.
      procs.push(startRole(env, 'relay'));
      await waitFor('outbox row marked', async () => {
        const o = await env.db
          .selectFrom('outbox')
          .select('published_at')
          .where('run_id', '=', 'run-relay-crash')
          .executeTakeFirstOrThrow();
        return o.published_at ?? undefined;
      });
      const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'active');
      expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(1);

      // The executor runs the one job: one effect.
      procs.push(startRole(env, 'executor'));
      const settled = await waitForStatus(env.db, row.idempotency_key, [
        StepStatus.CONFIRMED,
        StepStatus.UNKNOWN,
      ]);
      expect(settled.status).toBe('CONFIRMED');
      expect(settled.attempts).toBe(1);
      expect(await effectsFor(fx, row.idempotency_key)).toHaveLength(1);
    } finally {
      await queue.close();
    }
  });
});
