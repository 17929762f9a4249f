import { sql } from 'kysely';
import {
  authorityLapsed,
  CompensationStatus,
  redactArgs,
  requestRenewal,
  RunStatus,
  type CompensationRow,
  type Logger,
  type RecoveryAction,
  type RecoveryPolicy,
} from '@agent-saga/core';
import type { RunState } from '../sql/read-run-states.js';
import { argsForLookup } from './resolve-command-refs.js';
import type { UnwindDeps } from './unwind-deps.js';

/** Compensations a renewal's plan lists: every one still to send (or to decide), none done or skipped. */
const STILL_TO_SEND = new Set<CompensationStatus>([
  CompensationStatus.PENDING,
  CompensationStatus.AWAITING_APPROVAL,
  CompensationStatus.UNKNOWN,
  CompensationStatus.FAILED,
]);

/**
 * The recovery plan of an unwind whose authority lapsed: the compensations it would still send, in the
 * order the unwind sends them (reverse step order, the order of the default dependencies), each with its
 * tool, key and arguments as they would be sent (refs resolved where they can be, secrets redacted).
 */
export function unwindRecoveryPlan(d: UnwindDeps, state: RunState): RecoveryAction[] {
  return [...state.comps.values()]
    .filter(
      (c): c is CompensationRow & { tool: string; idempotency_key: string } =>
        STILL_TO_SEND.has(c.status) && c.tool !== null && c.idempotency_key !== null,
    )
    .sort((a, b) => b.step_idx - a.step_idx)
    .map((c): RecoveryAction => {
      const args = argsForLookup(c.args, state.steps);
      const tool = d.registry.get(c.tool);
      return {
        action: 'compensate',
        stepIdx: c.step_idx,
        tool: c.tool,
        key: c.idempotency_key,
        args: tool ? (redactArgs(tool, args) as Record<string, unknown>) : args,
      };
    });
}

/**
 * The unwind of a run whose authority has lapsed (`policy.authorityTtlMs` past `runs.authority_at`) sends
 * nothing more and waits for a renewal: in one transaction under the run's lock, the lapse is checked again
 * by the database's clock (an approval may have renewed it meanwhile) and the run's pending renewal is
 * found or created (`requestRenewal`), showing the plan above and its hash, expiring APPROVAL_TTL_MS from
 * now. The decision wakes the compensators: approved, the unwind goes on; rejected, the run stops for a
 * person. Returns what the pass must do: `waiting` (send nothing), `renewed` (an approval renewed the
 * authority meanwhile: go on), or `not-compensating` (the run moved meanwhile, e.g. a rejected renewal
 * stopped it: send nothing, the unwind is over for this compensator).
 */
export type RenewalWait = 'waiting' | 'renewed' | 'not-compensating';

export async function awaitRenewal(
  d: UnwindDeps,
  state: RunState,
  policy: RecoveryPolicy,
  unwindReason: string | null,
  log: Logger,
): Promise<RenewalWait> {
  const runId = state.steps[0]?.run_id;
  const run = state.run;
  if (!runId || !run || policy.authorityTtlMs === undefined) return 'renewed';
  const plan = unwindRecoveryPlan(d, state);
  const asked = await d.db.transaction().execute(async (trx) => {
    const locked = await trx
      .selectFrom('runs')
      .select(['status', 'authority_at', sql<Date>`now()`.as('db_now')])
      .where('run_id', '=', runId)
      .forUpdate()
      .executeTakeFirst();
    if (locked?.status !== RunStatus.COMPENSATING) return 'not-compensating' as const;
    if (!authorityLapsed(policy, locked.authority_at, locked.db_now)) return 'renewed' as const;
    return requestRenewal(trx, {
      tenantId: run.tenant_id,
      runId,
      plan,
      recovery: `unwind: ${unwindReason ?? 'no reason given'}`,
      authorityAt: locked.authority_at,
      authorityTtlMs: policy.authorityTtlMs!,
      expiresAt: new Date(locked.db_now.getTime() + d.config.APPROVAL_TTL_MS),
    });
  });
  if (typeof asked === 'string') return asked;
  if (asked.created)
    log.info(
      { approvalId: asked.approval.id, actions: plan.length },
      "the run's authority lapsed; the unwind waits for a renewal, nothing sent",
    );
  return 'waiting';
}
