/**
 * Every Postgres backend of the roles terminated, three times, while api, relay, executor, reconciler and
 * compensator run as real processes (what a Postgres restart, a failover or `idle_session_timeout` does to
 * them): no role exits, each `/readyz` answers 200 again, and calls made afterwards complete CONFIRMED,
 * each with exactly one effect. The relay's fallback poll is a minute, so a step published after the
 * terminations was woken by a LISTEN that was opened again; the call answers long before its `waitMs`, so
 * the API's settle waiter listens again too.
 *
 * Only this file's sessions are terminated: every role runs under its own `PG_APPLICATION_NAME` prefix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { createApiToken } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { closeFixtureTestEnv, createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { effectsFor } from './fixtures/effect-tools.js';
import { startRole, waitFor, type Role, type RoleProcess } from './fixtures/dispatcher-processes.js';
import { agentApi, exitedRoles, freePorts, readyz, waitForReadyz } from './fixtures/role-probes.js';

let env: TestEnv;
let fx: Kysely<unknown>;
let appPrefix: string;
let procs: RoleProcess[] = [];
let api: ReturnType<typeof agentApi>;
const bases: Record<string, string> = {};

const ROLES = ['api', 'relay', 'executor', 'reconciler', 'compensator'] as const satisfies readonly Role[];

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('survivepg'));
  appPrefix = `as-${env.schema}`;
  const ports = await freePorts(ROLES);
  procs = ROLES.map((role) => {
    bases[role] = `http://127.0.0.1:${ports[role]}`;
    return startRole(env, role, {
      PG_APPLICATION_NAME: appPrefix,
      ...(role === 'api' ? { PORT: String(ports[role]) } : { METRICS_PORT: String(ports[role]) }),
      // Only a NOTIFY (through a LISTEN that survived) wakes the relay within the test's bounds.
      RELAY_POLL_MS: '60000',
      RECONCILER_SWEEP_MS: '500',
      COMPENSATOR_SWEEP_MS: '500',
    });
  });
  api = agentApi(bases.api!, await createApiToken(env.db, { tenantId: 'acme', role: 'agent' }));
  for (const role of ROLES) await waitForReadyz(bases[role]!, 200, 60_000);
}, 120_000);
afterAll(() => closeFixtureTestEnv(env, procs));

/** Terminates every backend of this file's roles; returns how many there were. */
async function terminateRoleBackends(): Promise<number> {
  const r = await sql<{ n: number }>`
    SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
     WHERE application_name LIKE ${`${appPrefix}-%`} AND pid <> pg_backend_pid()`.execute(env.db);
  return r.rows[0]!.n;
}

async function confirmedOnce(runId: string, stepIdx: number): Promise<void> {
  const a = await api.call(runId, {
    tool: 'create_note',
    args: { orderId: `${runId}-${stepIdx}`, text: 'after a Postgres restart' },
    stepIdx,
    waitMs: 15_000,
  });
  expect(a.status, JSON.stringify(a.body)).toBe(200);
  expect(a.body.status).toBe('CONFIRMED');
  // Well before waitMs: the settle waiter was woken by a NOTIFY, not by its timeout.
  expect(a.elapsedMs).toBeLessThan(8_000);
  expect(await effectsFor(fx, String(a.body.idempotencyKey))).toHaveLength(1);
}

describe('every backend of the roles terminated while they run', () => {
  it('no role exits, /readyz comes back, and later calls complete CONFIRMED once', async () => {
    await api.createRun('run-pg-before');
    await confirmedOnce('run-pg-before', 0);

    await api.createRun('run-pg-during');
    for (let round = 0; round < 3; round++) {
      // Calls under way while their sessions go: connections checked out of a pool, mid-transaction.
      // Their answers may be errors; what matters is that no role goes down with them.
      const during = [0, 1].map((i) =>
        api
          .call('run-pg-during', {
            tool: 'create_note',
            args: { orderId: `during-${round}-${i}`, text: 'mid-terminate' },
            stepIdx: round * 2 + i,
            waitMs: 2_000,
          })
          .catch(() => undefined),
      );
      // Pools, LISTEN sessions: api, relay, executor, reconciler and compensator all hold some.
      expect(await terminateRoleBackends()).toBeGreaterThanOrEqual(ROLES.length);
      await Promise.all(during);
      await new Promise((r) => setTimeout(r, 1_500));
    }
    // Once more with no pause, so the reconnects below meet a fresh loss too.
    await terminateRoleBackends();

    for (const role of ROLES) {
      await waitForReadyz(bases[role]!, 200);
      expect((await readyz(bases[role]!)).status).toBe(200);
    }
    // The LISTEN sessions are back (the relay's and the API's are new backends under their names).
    await waitFor('LISTEN sessions back', async () => {
      const r = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE application_name LIKE ${`${appPrefix}-%`} AND query LIKE 'LISTEN%'`.execute(env.db);
      return r.rows[0]!.n >= 3 ? true : undefined;
    });

    await api.createRun('run-pg-after');
    for (let s = 0; s < 3; s++) await confirmedOnce('run-pg-after', s);
    expect(exitedRoles(procs)).toEqual([]);
  }, 120_000);
});
