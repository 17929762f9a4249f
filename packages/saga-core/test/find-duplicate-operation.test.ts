import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { z } from 'zod';
import {
  createRun,
  defineTool,
  findDuplicateOperation,
  operationIdentity,
  payloadHash,
  recordNewIntents,
  stepKey,
  type AnyTool,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv('dupop');
});
afterAll(async () => env?.close());

const tool = (name: string, spec: { identity?: string[]; repeatable?: boolean } = {}): AnyTool =>
  defineTool({
    name,
    class: 'compensatable',
    version: 1,
    args: z.record(z.string(), z.unknown()),
    ...spec,
    compensate: () => ({ tool: 'undo', args: {} }),
    execute: () => Promise.resolve({ externalRef: null, result: null }),
    lookup: () => Promise.resolve(null),
  }) as AnyTool;

const ticket = tool('create_ticket', { identity: ['orderId', 'customer.id'] });
const notice = tool('send_notice');

/** Writes `args` as step `stepIdx` of `runId` (no duplicate check: the rows a test starts from). */
async function step(
  runId: string,
  stepIdx: number,
  t: AnyTool,
  args: Record<string, unknown>,
  status: string,
) {
  await recordNewIntents(
    env.db,
    [
      {
        runId,
        stepIdx,
        tenantId: 'acme',
        tool: t.name,
        toolClass: t.class,
        toolVersion: 1,
        idempotencyKey: stepKey(runId, stepIdx, t.name),
        args,
        payloadHash: payloadHash(t.name, args),
        compensation: null,
        correction: null,
        audience: [],
        dependsOn: null,
        operation: null,
      },
    ],
    2_000,
  );
  await sql`UPDATE saga_log SET status = ${status}, external_ref = 'SUP-1', result = '{"id":"SUP-1"}'::jsonb
             WHERE run_id = ${runId} AND step_idx = ${stepIdx}`.execute(env.db);
}

const find = (runId: string, t: AnyTool, args: Record<string, unknown>) =>
  findDuplicateOperation(env.db, runId, operationIdentity(t, args)!);

describe('findDuplicateOperation', () => {
  it('matches the same tool with equal values at each identity path, whatever else differs', async () => {
    await createRun(env.db, { runId: 'fd-id', tenantId: 'acme', metadata: {} });
    await step(
      'fd-id',
      0,
      ticket,
      { orderId: '1', customer: { id: 'c1', name: 'Ada' }, summary: 'a' },
      'CONFIRMED',
    );
    expect(
      await find('fd-id', ticket, { summary: 'b', customer: { name: 'A.', id: 'c1' }, orderId: '1' }),
    ).toEqual({
      stepIdx: 0,
      status: 'CONFIRMED',
      idempotencyKey: stepKey('fd-id', 0, 'create_ticket'),
      externalRef: 'SUP-1',
      result: { id: 'SUP-1' },
      // Same operation, other words: not the earlier call sent again.
      sameArgs: false,
    });
    // The earlier call's own arguments, keys in another order: the same call sent again.
    expect(
      await find('fd-id', ticket, { summary: 'a', orderId: '1', customer: { name: 'Ada', id: 'c1' } }),
    ).toMatchObject({ stepIdx: 0, sameArgs: true });
    expect(await find('fd-id', ticket, { orderId: '2', customer: { id: 'c1' } })).toBeUndefined();
    expect(await find('fd-id', ticket, { orderId: '1', customer: { id: 'c2' } })).toBeUndefined();
    // An absent identity value is null: it equals neither a present one nor, here, 'c1'.
    expect(await find('fd-id', ticket, { orderId: '1' })).toBeUndefined();
    // Another tool with the same arguments is another operation.
    expect(
      await find('fd-id', tool('create_note', { identity: ['orderId'] }), { orderId: '1' }),
    ).toBeUndefined();
    // Nor is another run's step.
    await createRun(env.db, { runId: 'fd-id-2', tenantId: 'acme', metadata: {} });
    expect(await find('fd-id-2', ticket, { orderId: '1', customer: { id: 'c1' } })).toBeUndefined();
  });

  it('compares values exactly (an array is not a duplicate of its part) and absent as null', async () => {
    const items = tool('reship', { identity: ['items'] });
    await createRun(env.db, { runId: 'fd-exact', tenantId: 'acme', metadata: {} });
    await step('fd-exact', 0, items, { items: [1, 2, 3] }, 'INTENDED');
    expect(await find('fd-exact', items, { items: [1, 2] })).toBeUndefined();
    expect(await find('fd-exact', items, { items: [1, 2, 3] })).toMatchObject({
      stepIdx: 0,
      status: 'INTENDED',
    });
    await step('fd-exact', 1, items, { other: true }, 'INTENDED');
    expect(await find('fd-exact', items, { items: null })).toMatchObject({ stepIdx: 1 });
  });

  it('compares the whole arguments of a tool that declares no identity, as jsonb', async () => {
    await createRun(env.db, { runId: 'fd-whole', tenantId: 'acme', metadata: {} });
    await step('fd-whole', 0, notice, { to: 'bo@example.com', text: 'hi', n: 1.0 }, 'AWAITING_APPROVAL');
    expect(await find('fd-whole', notice, { n: 1, text: 'hi', to: 'bo@example.com' })).toMatchObject({
      stepIdx: 0,
      status: 'AWAITING_APPROVAL',
    });
    expect(await find('fd-whole', notice, { to: 'bo@example.com', text: 'hi!', n: 1 })).toBeUndefined();
    expect(await find('fd-whole', notice, { to: 'bo@example.com', text: 'hi' })).toBeUndefined();
  });

  it('ignores steps that never took effect, and answers the lowest step that may have', async () => {
    await createRun(env.db, { runId: 'fd-status', tenantId: 'acme', metadata: {} });
    const args = { orderId: '1', customer: { id: 'c1' } };
    await step('fd-status', 0, ticket, args, 'FAILED');
    await step('fd-status', 1, ticket, args, 'NOT_EXECUTED');
    await step('fd-status', 2, ticket, args, 'REJECTED');
    expect(await find('fd-status', ticket, args)).toBeUndefined();
    await step('fd-status', 4, ticket, args, 'MANUAL_INTERVENTION');
    await step('fd-status', 3, ticket, args, 'UNKNOWN');
    expect(await find('fd-status', ticket, args)).toMatchObject({ stepIdx: 3, status: 'UNKNOWN' });
  });

  it("agrees with saga_repeated_operations, the grouped intake's copy of the rule (migration 0026)", async () => {
    // The rows of the tests above; the queries go to the function in one call, as the grouped intake
    // sends its items (each at an index of its own, which names it in the answer), and each is also
    // answered by the live rule.
    const queries: [string, AnyTool, Record<string, unknown>][] = [
      ['fd-id', ticket, { summary: 'b', customer: { name: 'A.', id: 'c1' }, orderId: '1' }],
      ['fd-id', ticket, { orderId: '2', customer: { id: 'c1' } }],
      ['fd-id', ticket, { orderId: '1' }],
      ['fd-id', tool('create_note', { identity: ['orderId'] }), { orderId: '1' }],
      ['fd-exact', tool('reship', { identity: ['items'] }), { items: [1, 2] }],
      ['fd-exact', tool('reship', { identity: ['items'] }), { items: [1, 2, 3] }],
      ['fd-exact', tool('reship', { identity: ['items'] }), { items: null }],
      ['fd-whole', notice, { n: 1, text: 'hi', to: 'bo@example.com' }],
      ['fd-whole', notice, { to: 'bo@example.com', text: 'hi' }],
      ['fd-status', ticket, { orderId: '1', customer: { id: 'c1' } }],
      ['fd-status', ticket, { orderId: '9', customer: { id: 'c1' } }],
    ];
    const ops = queries.map(([, t, args]) => operationIdentity(t, args)!);
    const r = await sql<{ repeat_run_id: string; repeat_step_idx: number }>`
      SELECT repeat_run_id, repeat_step_idx
        FROM saga_repeated_operations(${queries.map(([runId]) => runId)}::text[],
                                      ${queries.map((_, n) => 100 + n)}::int[],
                                      ${ops.map((op) => op.tool)}::text[],
                                      ${ops.map((op) => JSON.stringify(op.args))}::jsonb[],
                                      ${ops.map((op) => (op.identity ? JSON.stringify(op.identity) : null))}::jsonb[],
                                      0)`.execute(env.db);
    const repeated = new Set(r.rows.map((row) => `${row.repeat_run_id}/${row.repeat_step_idx}`));
    let found = 0;
    for (const [n, [runId, t, args]] of queries.entries()) {
      const earlier = await find(runId, t, args);
      expect(repeated.has(`${runId}/${100 + n}`), `${runId} ${t.name} ${JSON.stringify(args)}`).toBe(
        earlier !== undefined,
      );
      if (earlier) found++;
    }
    // Both answers occur, so the agreement compared something.
    expect(found).toBeGreaterThan(2);
    expect(found).toBeLessThan(queries.length);
    expect(repeated.size).toBe(found);
  });

  it('has no operation for a repeatable tool', () => {
    expect(
      operationIdentity(tool('add_comment', { identity: ['orderId'], repeatable: true }), {}),
    ).toBeNull();
    expect(operationIdentity(ticket, { orderId: 'o' })).toEqual({
      tool: 'create_ticket',
      args: { orderId: 'o' },
      identity: { orderId: 'o', 'customer.id': null },
    });
    expect(operationIdentity(notice, { text: 'x' })).toEqual({
      tool: 'send_notice',
      args: { text: 'x' },
      identity: null,
    });
    expect(() => tool('bad', { repeatable: 'yes' as unknown as boolean })).toThrow(/repeatable/);
  });
});
