/**
 * The duplicate `pnpm simulate` found (docs/simulation.md), reproduced with the real sandbox Jira, the real
 * connectors and the api, relay, executor and reconciler as real processes: Jira holds a `create_ticket`
 * past the tool's timeout (a `delay` fault) and commits it afterwards, while its search lags its writes.
 * The step becomes UNKNOWN; the reconciler's lookups by the `saga-<key>` label find nothing for a while.
 *
 * - With a horizon shorter than the hold (0: what the rule computed before `commitHorizonMs`, the lookup
 *   lag alone), the reconciler believes the "not found", re-sends, and both creates commit: two tickets.
 *   This is the control: it shows the scenario really reaches the vendor and can double.
 * - With Jira's declared horizon above the hold, "not found" is not believed in time for a re-send: the
 *   late ticket shows in the search, the step is CONFIRMED by lookup, sent once, one ticket.
 *
 * Nobody retries the call: the recovery is the reconciler's alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolOutcomeUnknown } from '@agent-saga/client';
import { waitFor } from '../../../test/fixtures/dispatcher-processes.js';
import { LAG_MS, startSupportHarness, type SupportHarness } from '../../../test/fixtures/support-harness.js';

/** Why 1 s: the tool's timeout (the executor gives up, the step is UNKNOWN); short to keep the file fast. */
const TIMEOUT_MS = 1_000;
/**
 * Why 4 s: how long the sandbox holds the create before it commits, from its arrival: well past the
 * timeout, and far enough past the old rule's verdict (timeout, lag 800 ms, re-check) that the re-send
 * lands before the held create commits even on two busy cores.
 */
const HOLD_MS = 4_000;
/** Why 5 s: Jira's declared horizon, above the hold plus the time from `last_attempt_at` to the request. */
const HORIZON_MS = 5_000;

const TICKET = { summary: 'Refund for order #1183', orderId: '1183' } as const;

async function harness(label: string, horizonMs: number): Promise<SupportHarness> {
  return startSupportHarness(label, ['relay', 'executor', 'reconciler'], {
    env: {
      TEST_TOOL_TIMEOUT_MS: String(TIMEOUT_MS),
      JIRA_COMMIT_HORIZON_MS: String(horizonMs),
      LOG_LEVEL: 'warn',
    },
  });
}

/** Sends the create under a hold of HOLD_MS; resolves once the executor gave up (the call is unknown). */
async function sendHeldCreate(h: SupportHarness, runId: string): Promise<{ sentAt: number }> {
  await h.saga.createRun({ runId });
  h.sandbox.admin.addFault({
    vendor: 'jira',
    method: 'POST',
    path: '/rest/api/3/issue',
    kind: 'delay',
    delayMs: HOLD_MS,
    nth: 1,
  });
  const sentAt = Date.now();
  const first = await h.saga
    .call(runId, 'create_ticket', TICKET, { stepIdx: 0, waitMs: TIMEOUT_MS + 2_000 })
    .catch((e: unknown) => e);
  expect(first).toBeInstanceOf(ToolOutcomeUnknown);
  return { sentAt };
}

/** The tickets labelled with the step's key, once the held create has surely landed. */
async function ticketsOf(h: SupportHarness, runId: string, sentAt: number) {
  const key = (await h.saga.getRun(runId)).steps[0]!.idempotencyKey;
  // The held create commits HOLD_MS after it arrived; a re-send (if any) committed before it.
  await new Promise((r) => setTimeout(r, Math.max(0, sentAt + HOLD_MS + LAG_MS + 500 - Date.now())));
  return h.sandbox.admin.ledger().jira.issues.filter((i) => i.labels.includes(`saga-${key}`));
}

async function eventsOf(h: SupportHarness, runId: string) {
  return h.env.db
    .selectFrom('step_events')
    .select(['kind', 'to_status', 'cause', 'detail'])
    .where('run_id', '=', runId)
    .where('step_idx', '=', 0)
    .orderBy('id')
    .execute();
}

describe('a late commit on Jira, with a horizon shorter than the hold (the old rule)', () => {
  let h: SupportHarness;
  beforeAll(async () => {
    h = await harness('late_commit_short', 0);
  }, 90_000);
  afterAll(async () => h?.close());

  it('believes "not found" before the held create commits, re-sends, and Jira holds two tickets', async () => {
    const runId = 'late-commit-no-horizon';
    const { sentAt } = await sendHeldCreate(h, runId);
    await waitFor(
      'the reconciler re-sends the create',
      async () => ((await h.saga.getRun(runId)).steps[0]!.attempts >= 2 ? true : undefined),
      20_000,
      100,
    );
    const tickets = await ticketsOf(h, runId, sentAt);
    expect(tickets).toHaveLength(2);
    const events = await eventsOf(h, runId);
    expect(events.map((e) => e.to_status)).toContain('NOT_EXECUTED');
  }, 60_000);
});

describe('a late commit on Jira, with Jira’s declared horizon above the hold', () => {
  let h: SupportHarness;
  beforeAll(async () => {
    h = await harness('late_commit_horizon', HORIZON_MS);
  }, 90_000);
  afterAll(async () => h?.close());

  it('waits out the horizon: the late ticket is found by lookup, the step CONFIRMED, one ticket', async () => {
    const runId = 'late-commit-horizon';
    const { sentAt } = await sendHeldCreate(h, runId);
    const step = await waitFor(
      'the step settles',
      async () => {
        const s = (await h.saga.getRun(runId)).steps[0]!;
        return ['INTENDED', 'UNKNOWN'].includes(s.status) ? undefined : s;
      },
      HORIZON_MS + LAG_MS + 15_000,
      100,
    );
    expect(step).toMatchObject({ status: 'CONFIRMED', attempts: 1 });
    const tickets = await ticketsOf(h, runId, sentAt);
    expect(tickets).toHaveLength(1);
    expect(step.externalRef).toBe(tickets[0]!.key);
    const events = await eventsOf(h, runId);
    // It went UNKNOWN at the timeout, was never proven absent nor re-sent, and the reconciler's lookup
    // found the ticket the held create made.
    expect(events.filter((e) => e.to_status === 'UNKNOWN')).toHaveLength(1);
    expect(events.filter((e) => e.to_status === 'NOT_EXECUTED')).toEqual([]);
    const confirmed = events.filter((e) => e.to_status === 'CONFIRMED');
    expect(confirmed).toHaveLength(1);
    expect(confirmed[0]).toMatchObject({
      cause: 'reconciler: lookup found the effect',
      detail: { externalRef: tickets[0]!.key },
    });
  }, 60_000);
});
