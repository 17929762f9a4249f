import type { SagaClient } from '@agent-saga/client';

/**
 * Calls as an agent backend makes them: each lane plays one agent, which calls `noop` as the next step of
 * its run (explicit `stepIdx`, as the client library always sends) and moves to a fresh run after
 * `stepsPerRun` steps. Lanes never share a run, so no two calls wait on one run's lock.
 */
export interface SagaLanes {
  /** One call on `lane`; resolves with the step's idempotency key once the answer is CONFIRMED. */
  call(lane: number): Promise<string>;
  /** Runs created through the API because the pre-created ones ran out (0 when the pool was big enough). */
  readonly runsCreatedOnTheFly: number;
}

export function createSagaLanes(opts: {
  readonly client: SagaClient;
  /** Pre-created runs, taken in order. */
  readonly runIds: readonly string[];
  readonly stepsPerRun: number;
  readonly waitMs: number;
}): SagaLanes {
  const lanes = new Map<number, { runId: string; nextStep: number }>();
  let taken = 0;
  let createdOnTheFly = 0;
  let n = 0;

  async function freshRun(): Promise<string> {
    const id = opts.runIds[taken++];
    if (id !== undefined) return id;
    createdOnTheFly++;
    return (await opts.client.createRun()).runId;
  }

  return {
    async call(lane) {
      let state = lanes.get(lane);
      if (!state || state.nextStep >= opts.stepsPerRun) {
        state = { runId: await freshRun(), nextStep: 0 };
        lanes.set(lane, state);
      }
      const stepIdx = state.nextStep++;
      const outcome = await opts.client.call(
        state.runId,
        'noop',
        { n: n++ },
        { stepIdx, waitMs: opts.waitMs },
      );
      if (outcome.status !== 'CONFIRMED')
        throw new Error(`noop at ${state.runId}/${stepIdx} answered ${outcome.status}, expected CONFIRMED`);
      return outcome.idempotencyKey;
    },
    get runsCreatedOnTheFly() {
      return createdOnTheFly;
    },
  };
}
