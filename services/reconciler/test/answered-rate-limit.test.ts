/**
 * The misses `pnpm simulate` found after the commit-horizon fix (docs/simulation.md, seed 11): Jira answers
 * a `create_ticket` with 429 (`Retry-After`), the step becomes UNKNOWN, and the reconciler's "not found"
 * waited out Jira's whole commit horizon (14 s there) before the create was sent again, so an agent that
 * retried for ~11 s gave up and the task was undone although it could have succeeded.
 *
 * An answered 429 leaves nothing in flight, so the horizon does not apply to it: here Jira declares a horizon
 * of 30 s, far above the wait of an answered 429 (the tool's 1 s timeout, then the larger of the 800 ms
 * search lag and the vendor's `Retry-After` of 2 s), and the reconciler alone (nobody retries the call)
 * re-sends the create after that wait and before the horizon. The control is a 503 answered the same way:
 * a 5xx may come from a gateway whose backend still works, so its step still waits the horizon out.
 *
 * The api, relay, executor and reconciler run as real processes against the sandbox Jira and the real
 * connectors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolOutcomeUnknown } from '@agent-saga/client';
import { waitFor } from '../../../test/fixtures/dispatcher-processes.js';
import { startSupportHarness, type SupportHarness } from '../../../test/fixtures/support-harness.js';

/** Why 1 s: the tool's timeout, the bound on when an answer came; short to keep the file fast. */
const TIMEOUT_MS = 1_000;
/** Why 30 s: Jira's declared horizon, far above every wait this file measures, so the two are told apart. */
const HORIZON_MS = 30_000;
/** Why 2 s: above the 800 ms search lag, so a rule that ignored `Retry-After` re-sends visibly earlier. */
const RETRY_AFTER_S = 2;
/** The earliest re-send the rule allows after the first attempt: the timeout, then `Retry-After`. */
const ANSWERED_WAIT_MS = TIMEOUT_MS + RETRY_AFTER_S * 1_000;

const TICKET = { summary: 'Refund for order #2207', orderId: '2207' } as const;

let h: SupportHarness;
beforeAll(async () => {
  h = await startSupportHarness('answered_rate_limit', ['relay', 'executor', 'reconciler'], {
    env: {
      TEST_TOOL_TIMEOUT_MS: String(TIMEOUT_MS),
      JIRA_COMMIT_HORIZON_MS: String(HORIZON_MS),
      LOG_LEVEL: 'warn',
    },
  });
}, 90_000);
afterAll(async () => h?.close());

/** Arms one answered `status` on Jira's create, sends the create, and returns once it is unknown. */
async function createAnswered(runId: string, status: number): Promise<{ sentAt: number }> {
  await h.saga.createRun({ runId });
  h.sandbox.admin.addFault({
    vendor: 'jira',
    method: 'POST',
    path: '/rest/api/3/issue',
    kind: 'status',
    status,
    headers: { 'retry-after': String(RETRY_AFTER_S) },
    nth: 1,
  });
  const sentAt = Date.now();
  const first = await h.saga
    .call(runId, 'create_ticket', TICKET, { stepIdx: 0, waitMs: TIMEOUT_MS + 1_000 })
    .catch((e: unknown) => e);
  expect(first).toBeInstanceOf(ToolOutcomeUnknown);
  return { sentAt };
}

async function eventsOf(runId: string) {
  return h.env.db
    .selectFrom('step_events')
    .select(['kind', 'to_status', 'cause', 'detail', 'at'])
    .where('run_id', '=', runId)
    .where('step_idx', '=', 0)
    .orderBy('id')
    .execute();
}

async function ticketsOf(runId: string) {
  const key = (await h.saga.getRun(runId)).steps[0]!.idempotencyKey;
  return h.sandbox.admin.ledger().jira.issues.filter((i) => i.labels.includes(`saga-${key}`));
}

describe('a Jira create answered 429', () => {
  it('is sent again after the answer and Retry-After, not after the horizon: one ticket', async () => {
    const runId = 'answered-429';
    const { sentAt } = await createAnswered(runId, 429);
    const step = await waitFor(
      'the step settles',
      async () => {
        const s = (await h.saga.getRun(runId)).steps[0]!;
        return s.status === 'CONFIRMED' ? s : undefined;
      },
      HORIZON_MS / 2,
      100,
    );
    // Settled by the reconciler's re-send, well inside the horizon.
    expect(step.attempts).toBe(2);
    expect(Date.now() - sentAt).toBeLessThan(HORIZON_MS / 2);
    const tickets = await ticketsOf(runId);
    expect(tickets).toHaveLength(1);
    expect(step.externalRef).toBe(tickets[0]!.key);

    const events = await eventsOf(runId);
    // The executor stored the answer with its attempt and the vendor's Retry-After.
    const unknown = events.find((e) => e.to_status === 'UNKNOWN');
    expect(unknown?.detail).toMatchObject({ status: 429, attempt: 1, retryAfterMs: RETRY_AFTER_S * 1_000 });
    // Proven absent once, by the reconciler, and not before the timeout plus Retry-After had passed.
    const attempts = events.filter((e) => e.kind === 'attempt');
    expect(attempts).toHaveLength(2);
    const resentAfterMs = attempts[1]!.at.getTime() - attempts[0]!.at.getTime();
    expect(resentAfterMs).toBeGreaterThanOrEqual(ANSWERED_WAIT_MS);
    expect(events.filter((e) => e.to_status === 'NOT_EXECUTED')).toMatchObject([
      { cause: 'reconciler: not found, re-checked after the lookup lag' },
    ]);
  }, 60_000);
});

describe('a Jira create answered 503 (the control)', () => {
  it('keeps the horizon: still unknown and sent once when an answered 429 would have been sent again', async () => {
    const runId = 'answered-503';
    const { sentAt } = await createAnswered(runId, 503);
    // Twice the answered wait, and the reconciler has looked (it sweeps every 200 ms): nothing re-sent.
    await new Promise((r) => setTimeout(r, Math.max(0, sentAt + 2 * ANSWERED_WAIT_MS - Date.now())));
    const step = (await h.saga.getRun(runId)).steps[0]!;
    expect(step).toMatchObject({ status: 'UNKNOWN', attempts: 1 });
    const events = await eventsOf(runId);
    expect(events.find((e) => e.to_status === 'UNKNOWN')?.detail).toMatchObject({ status: 503, attempt: 1 });
    expect(events.filter((e) => e.kind === 'lookup').length).toBeGreaterThan(0);
    expect(events.filter((e) => e.to_status === 'NOT_EXECUTED')).toEqual([]);
    expect(await ticketsOf(runId)).toEqual([]);
  }, 60_000);
});
