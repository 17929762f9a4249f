import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRun,
  InvalidTransitionError,
  listSteps,
  recordIntent,
  StepStatus,
  stepKey,
  transitionStep,
  valuesOf,
  isLegalTransition,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { intendedStep } from './intended-step.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('sagalog');
});
afterAll(async () => env?.close());

const newStep = (runId: string, status: 'INTENDED' | 'AWAITING_APPROVAL' = 'INTENDED') =>
  intendedStep(env, runId, {
    args: { orderId: '1182', summary: 'Refund order 1182' },
    audience: ['support_team'],
    status,
  });

describe('saga log', () => {
  it('writes an INTENDED row, its event and its outbox message together', async () => {
    const row = await newStep('run-intent');
    expect(row.status).toBe('INTENDED');
    const outbox = await env.db.selectFrom('outbox').selectAll().where('run_id', '=', 'run-intent').execute();
    expect(outbox).toHaveLength(1);
    expect(outbox[0]!.job_id).toBe(row.idempotency_key);
    const events = await env.db
      .selectFrom('step_events')
      .selectAll()
      .where('run_id', '=', 'run-intent')
      .where('step_idx', 'is not', null)
      .execute();
    expect(events.map((e) => [e.from_status, e.to_status])).toEqual([[null, 'INTENDED']]);
  });

  it('writes nothing when the transaction that holds the intent fails', async () => {
    await expect(
      env.db.transaction().execute(async (trx) => {
        await createRun(env.db, { runId: 'run-rollback', tenantId: 'acme', metadata: {} });
        await recordIntent(trx, {
          runId: 'run-rollback',
          stepIdx: 0,
          tenantId: 'acme',
          tool: 't',
          toolClass: 'compensatable',
          toolVersion: 1,
          idempotencyKey: stepKey('run-rollback', 0, 't'),
          args: {},
          payloadHash: 'x',
          compensation: null,
          correction: null,
          audience: [],
          dependsOn: null,
          status: 'INTENDED',
          schema: env.schema,
        });
        throw new Error('boom after the insert');
      }),
    ).rejects.toThrow('boom');
    expect(await listSteps(env.db, 'run-rollback')).toEqual([]);
    expect(
      await env.db.selectFrom('outbox').selectAll().where('run_id', '=', 'run-rollback').execute(),
    ).toEqual([]);
  });

  it('refuses every illegal transition from every reachable state, leaving the row as it was', async () => {
    const reach: Record<string, StepStatus[]> = {
      INTENDED: [],
      CONFIRMED: ['CONFIRMED'],
      FAILED: ['FAILED'],
      UNKNOWN: ['UNKNOWN'],
      NOT_EXECUTED: ['NOT_EXECUTED'],
      AWAITING_APPROVAL: [],
      REJECTED: ['REJECTED'],
      MANUAL_INTERVENTION: ['UNKNOWN', 'MANUAL_INTERVENTION'],
    };
    let n = 0;
    for (const from of valuesOf(StepStatus)) {
      for (const to of valuesOf(StepStatus)) {
        if (isLegalTransition(from, to)) continue;
        const runId = `run-illegal-${n++}`;
        await newStep(
          runId,
          from === 'AWAITING_APPROVAL' || from === 'REJECTED' ? 'AWAITING_APPROVAL' : 'INTENDED',
        );
        for (const s of reach[from]!)
          await env.db
            .transaction()
            .execute((trx) =>
              transitionStep(trx, { runId, stepIdx: 0, to: s, cause: 'setup', schema: env.schema }),
            );
        const err = await env.db
          .transaction()
          .execute((trx) => transitionStep(trx, { runId, stepIdx: 0, to, cause: 'test', schema: env.schema }))
          .catch((e: unknown) => e);
        expect(err, `${from} → ${to}`).toBeInstanceOf(InvalidTransitionError);
        expect((err as InvalidTransitionError).from).toBe(from);
        const [row] = await listSteps(env.db, runId);
        expect(row!.status).toBe(from);
      }
    }
    expect(n).toBeGreaterThan(40);
  });

  it('records a legal transition with its event and cause', async () => {
    await newStep('run-legal');
    await env.db.transaction().execute((trx) =>
      transitionStep(trx, {
        runId: 'run-legal',
        stepIdx: 0,
        to: 'CONFIRMED',
        cause: 'executor: tool returned',
        patch: { external_ref: 'SUP-4470', result: JSON.stringify({ key: 'SUP-4470' }) },
        schema: env.schema,
      }),
    );
    const [row] = await listSteps(env.db, 'run-legal');
    expect(row).toMatchObject({ status: 'CONFIRMED', external_ref: 'SUP-4470', result: { key: 'SUP-4470' } });
    const events = await env.db
      .selectFrom('step_events')
      .selectAll()
      .where('run_id', '=', 'run-legal')
      .orderBy('id')
      .execute();
    expect(events.at(-1)).toMatchObject({
      from_status: 'INTENDED',
      to_status: 'CONFIRMED',
      cause: 'executor: tool returned',
    });
  });
});
