/**
 * The unwind channel: a run that starts to unwind wakes the compensators with one NOTIFY of its id on
 * `unwindChannel(schema)`, the channel the compensator's worker listens to, and only when the unwind commits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRun,
  listenChannel,
  requestUnwind,
  RunStatus,
  unwindChannel,
  type ChannelListener,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';

let env: TestEnv;
let listener: ChannelListener;
/** Every NOTIFY on the unwind channel, in arrival order (payload: the run id). */
const woken: string[] = [];
beforeAll(async () => {
  env = await createTestEnv('wakecomp');
  listener = await listenChannel({
    db: { url: env.databaseUrl, schema: env.schema },
    channel: unwindChannel(env.schema),
    onNotify: (runId) => woken.push(runId ?? ''),
  });
});
afterAll(async () => {
  await listener?.stop();
  await env?.close();
});

const TENANT = 'acme';

async function runningRun(runId: string): Promise<void> {
  await createRun(env.db, { runId, tenantId: TENANT, metadata: {} });
}

async function unwind(runId: string): Promise<string> {
  const row = await env.db
    .transaction()
    .execute((trx) => requestUnwind(trx, { tenantId: TENANT, runId, reason: 'test', schema: env.schema }));
  return row.status;
}

/** Resolves once `runId` was announced (NOTIFYs arrive in commit order, so what came before is in too). */
async function wokenFor(runId: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!woken.includes(runId)) {
    if (Date.now() > deadline) throw new Error(`no NOTIFY for ${runId} on ${unwindChannel(env.schema)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('wakeCompensators', () => {
  it('an unwind that commits announces its run id once; asking again while compensating does not', async () => {
    await runningRun('wake-1');
    expect(await unwind('wake-1')).toBe(RunStatus.COMPENSATING);
    await wokenFor('wake-1');
    expect(await unwind('wake-1')).toBe(RunStatus.COMPENSATING);
    await runningRun('wake-2');
    await unwind('wake-2');
    await wokenFor('wake-2');
    expect(woken.filter((r) => r === 'wake-1')).toEqual(['wake-1']);
  });

  it('an unwind whose transaction rolls back wakes nobody', async () => {
    await runningRun('wake-rolled-back');
    await expect(
      env.db.transaction().execute(async (trx) => {
        await requestUnwind(trx, {
          tenantId: TENANT,
          runId: 'wake-rolled-back',
          reason: 'test',
          schema: env.schema,
        });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    // Committed after the rolled-back one: once it is in, the other would have been in before it.
    await runningRun('wake-after');
    await unwind('wake-after');
    await wokenFor('wake-after');
    expect(woken).not.toContain('wake-rolled-back');
  });
});
