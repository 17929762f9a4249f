/**
 * A Jira create whose answer was lost after Jira committed it (a 504 after the effect), with a long commit
 * horizon declared for Jira (60 s, as a vendor that may hold requests for a minute would) and a search that
 * lags its writes (800 ms). The reconciler takes the UNKNOWN step within its sweep (200 ms), so its first
 * lookup by the `saga-<key>` label usually comes inside the lag and finds nothing; that "not found" cannot
 * be believed before the horizon. It must look again once the search can show the ticket, and confirm the
 * step in seconds, rather than leave an existing ticket UNKNOWN until the horizon (core's `nextLookupAt`;
 * seen in `pnpm soak --execute-inline`, where Jira's default horizon of 120 s outlasted the soak).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolOutcomeUnknown } from '@agent-saga/client';
import { waitFor } from '../../../test/fixtures/dispatcher-processes.js';
import { startSupportHarness, type SupportHarness } from '../../../test/fixtures/support-harness.js';

/** Why 60 s: far beyond what the test waits, so a step confirmed in time was confirmed before the horizon. */
const HORIZON_MS = 60_000;
const TICKET = { summary: 'Refund for order #1190', orderId: '1190' } as const;

describe('an unknown create whose effect exists, under a long commit horizon', () => {
  let h: SupportHarness;
  beforeAll(async () => {
    h = await startSupportHarness('early_lookup', ['relay', 'executor', 'reconciler'], {
      env: { JIRA_COMMIT_HORIZON_MS: String(HORIZON_MS), LOG_LEVEL: 'warn' },
    });
  }, 90_000);
  afterAll(async () => h?.close());

  it('is confirmed by a lookup soon after the search shows it, long before the horizon', async () => {
    const runId = 'early-lookup';
    await h.saga.createRun({ runId });
    h.sandbox.admin.addFault({
      vendor: 'jira',
      method: 'POST',
      path: '/rest/api/3/issue',
      kind: 'error_after',
      status: 504,
      nth: 1,
    });
    const sentAt = Date.now();
    const first = await h.saga.call(runId, 'create_ticket', TICKET, { stepIdx: 0 }).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(ToolOutcomeUnknown);

    const step = await waitFor(
      'the step settles',
      async () => {
        const s = (await h.saga.getRun(runId)).steps[0]!;
        return ['INTENDED', 'UNKNOWN'].includes(s.status) ? undefined : s;
      },
      20_000,
      100,
    );
    expect(Date.now() - sentAt).toBeLessThan(HORIZON_MS / 2);
    expect(step).toMatchObject({ status: 'CONFIRMED', attempts: 1 });
    const tickets = h.sandbox.admin
      .ledger()
      .jira.issues.filter((i) => i.labels.includes(`saga-${step.idempotencyKey}`));
    expect(tickets).toHaveLength(1);
    expect(step.externalRef).toBe(tickets[0]!.key);
  }, 60_000);
});
