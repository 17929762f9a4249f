import {
  CompensationStatus,
  holdCompensation,
  InvalidTransitionError,
  readDbNow,
  transitionCompensation,
  type CompensationRow,
  type CompensationTransition,
} from '@agent-saga/core';
import {
  MOVED_MEANWHILE,
  unhandled,
  type CompensationPass,
  type Ended,
  type HoldForApproval,
  type LookupEvents,
  type RecheckLater,
} from './compensation-pass.js';
import { countOutcome, observeConfirmed } from './count-compensation.js';
import type { UnwindDeps } from './unwind-deps.js';

/**
 * Writes how a pass ended without a send (`PassEnd`), after its lookup events:
 *
 * - `done-already` → compensated, with the evidence and what the lookup found;
 * - `recheck-later` → no move: only the row's due time, so no event;
 * - `give-up` → failed for good, the lease and the due time cleared, the reason (and the error, when
 *   there is one) on the row: the run will end MANUAL_INTERVENTION with a case;
 * - `hold-for-approval` → awaiting_approval with its `compensation` approval (`holdCompensation`), which
 *   expires APPROVAL_TTL_MS from now by the database's clock; nothing sent.
 *
 * Each is one row in its own transaction (`transitionCompensation`), guarded by the status and attempt
 * count the pass read; a row moved meanwhile is logged and left alone.
 */
export async function endPass(d: UnwindDeps, pass: CompensationPass, e: Ended): Promise<void> {
  await writeLookups(d, e.lookups);
  const end = e.end;
  const tool = pass.comp.tool ?? '(none)';
  switch (end.kind) {
    case 'done-already': {
      const moved = await moveFromSeen(d, pass, {
        to: CompensationStatus.COMPENSATED,
        cause: end.cause,
        detail: end.detail,
        patch: end.patch,
      });
      if (end.duplicates) d.metrics?.duplicateEffects.inc({ tool });
      if (moved) {
        countOutcome(d, tool, end.outcome, false);
        observeConfirmed(d, tool, moved);
      }
      return;
    }
    case 'recheck-later':
      return postpone(d, pass, end);
    case 'give-up': {
      const moved = await moveFromSeen(d, pass, {
        to: CompensationStatus.FAILED,
        cause: `compensator: needs a person: ${end.reason}`,
        detail: end.detail,
        patch: {
          next_attempt_at: null,
          reason: end.reason,
          lease_until: null,
          lease_owner: null,
          ...(end.error ? { error: JSON.stringify(end.error) } : {}),
        },
      });
      if (moved) countOutcome(d, tool, end.outcome, true);
      return;
    }
    case 'hold-for-approval':
      return hold(d, pass, end);
    default:
      return unhandled(end, 'pass end');
  }
}

/** The evidence of a pass that writes alone (its events group): before its move or its re-check. */
async function writeLookups(d: UnwindDeps, lookups: LookupEvents): Promise<void> {
  if (lookups.length) await d.groups.events.submit(lookups);
}

/**
 * One move of the row from what this pass read: compare-and-set on its status AND attempt count, so a pass
 * that read a row before another attempt came and went (failed → running → failed) writes nothing. Null
 * when the row moved meanwhile.
 */
async function moveFromSeen(
  d: UnwindDeps,
  pass: CompensationPass,
  t: Pick<CompensationTransition, 'to' | 'cause' | 'detail' | 'patch'>,
): Promise<CompensationRow | null> {
  const { comp } = pass;
  try {
    return await d.db.transaction().execute((trx) =>
      transitionCompensation(trx, {
        ...t,
        runId: comp.run_id,
        stepIdx: comp.step_idx,
        onlyFrom: [comp.status],
        atAttempts: comp.attempts,
      }),
    );
  } catch (err) {
    if (err instanceof InvalidTransitionError) {
      pass.log.info({ to: t.to, from: err.from }, MOVED_MEANWHILE);
      return null;
    }
    throw err;
  }
}

/**
 * Leaves a compensation where it is, to be looked at again at `r.at` (no status change, so no event).
 * Guarded by the status and attempt count this pass read: it never postpones an attempt made meanwhile.
 */
async function postpone(d: UnwindDeps, pass: CompensationPass, r: RecheckLater): Promise<void> {
  const { comp } = pass;
  await d.db
    .updateTable('compensations')
    .set({ next_attempt_at: r.at })
    .where('run_id', '=', comp.run_id)
    .where('step_idx', '=', comp.step_idx)
    .where('status', '=', comp.status)
    .where('attempts', '=', comp.attempts)
    .execute();
  const when = r.at instanceof Date ? { at: r.at } : {};
  d.logger.debug(
    { runId: comp.run_id, stepIdx: comp.step_idx, ...when, why: r.why },
    'compensation re-check scheduled',
  );
}

/**
 * Holds the compensation for a person (`holdCompensation`: the approval and the move to awaiting_approval
 * commit together, guarded by the status and attempt count this pass read). The deadline is APPROVAL_TTL_MS
 * from the database's `now()`, and the evidence says so. A row moved meanwhile is logged and left alone.
 */
async function hold(d: UnwindDeps, pass: CompensationPass, h: HoldForApproval): Promise<void> {
  const { comp } = pass;
  try {
    const approval = await d.db.transaction().execute(async (trx) => {
      const expiresAt = new Date((await readDbNow(trx)).getTime() + d.config.APPROVAL_TTL_MS);
      return holdCompensation(trx, {
        tenantId: comp.tenant_id,
        runId: comp.run_id,
        command: h.command,
        seenAttempts: comp.attempts,
        summary: h.summary,
        evidence: { ...h.evidence, deadline: expiresAt.toISOString() },
        expiresAt,
      });
    });
    pass.log.info(
      { approvalId: approval.id },
      'compensation held for approval; the rest of the unwind goes on',
    );
  } catch (err) {
    if (!(err instanceof InvalidTransitionError)) throw err;
    pass.log.info({ to: CompensationStatus.AWAITING_APPROVAL, from: err.from }, MOVED_MEANWHILE);
  }
}
