import { sql } from 'kysely';
import type { SagaTrx } from '../../db/connect.js';
import type { CaseRow } from '../../db/schema.js';
import { advanceCommit } from '../pivot/advance-commit.js';
import { CaseActionError } from '../../errors/errors.js';
import { lockReviewItem } from '../lock-review-item.js';
import { ApprovalKind, ApprovalStatus } from '../approvals/approval-status.js';
import { CaseAction } from './case-action.js';
import { CompensationStatus } from '../../compensations/compensation-status.js';
import { ReviewStatus } from './case-status.js';
import { RunStatus } from '../../runs/run-status.js';
import { StepEventKind } from '../../steps/step-event-kind.js';
import { StepStatus } from '../../steps/step-status.js';
import { appendStepEvent } from '../../steps/append-event.js';
import { redispatchStep } from '../../steps/redispatch/redispatch-step.js';
import { startUnwind } from '../../compensations/request-unwind.js';
import { transitionRun } from '../../runs/transition-run.js';
import { transitionCase } from './transition-case.js';
import { transitionStep } from '../../steps/transition-step.js';
import { wakeCompensators } from '../../compensations/wake-compensators.js';
import type { Decider } from '../decider.js';

/** An operator's action on a case; who resolves it (`actor`, `tokenId`, see {@link Decider}) is recorded. */
export interface CaseResolution extends Decider {
  readonly tenantId: string;
  readonly caseId: string;
  readonly action: CaseAction;
  /** For `confirmed`: the effect's id in the real system, found by hand. */
  readonly externalRef?: string | undefined;
  readonly comment?: string | undefined;
  readonly actor: string;
  readonly schema: string;
}

/** Step statuses a person may settle by hand: nobody knows, or the harness gave up. */
const SETTLE_BY_HAND = [StepStatus.MANUAL_INTERVENTION, StepStatus.UNKNOWN] as const;

/**
 * An operator's action on an open case, in the caller's transaction (run locked first, then the case).
 * Every action closes the case with who, when and what, and appends a decision event.
 *
 * - `confirmed` / `not_executed`: the step (MANUAL_INTERVENTION or UNKNOWN) becomes CONFIRMED with the ref
 *   found by hand, or NOT_EXECUTED. A run still going forward continues: a NOT_EXECUTED step is sent again
 *   with its key and stored arguments; a pivot stopped by this step resumes (MANUAL_INTERVENTION → RUNNING)
 *   and its next commit step is released.
 * - `retry_compensation`: the step's compensation gets a fresh attempt budget (same key) and the run goes
 *   back to the compensator (MANUAL_INTERVENTION → COMPENSATING).
 * - `resolve_run`: nothing more for the harness; every open case of the run is closed, the run keeps its
 *   status.
 *
 * @throws NotFoundError for another tenant's or a missing case.
 * @throws CaseActionError for a resolved case, or an action that does not fit the case.
 */
export async function resolveCase(trx: SagaTrx, r: CaseResolution): Promise<CaseRow> {
  const runId = await lockReviewItem(trx, 'cases', r.caseId, r.tenantId);
  const run = await trx.selectFrom('runs').selectAll().where('run_id', '=', runId).executeTakeFirstOrThrow();
  const c = await trx.selectFrom('cases').selectAll().where('id', '=', r.caseId).executeTakeFirstOrThrow();
  if (c.status !== ReviewStatus.OPEN) throw new CaseActionError(r.caseId, `is ${c.status} already`);
  const step =
    c.step_idx === null
      ? undefined
      : await trx
          .selectFrom('saga_log')
          .selectAll()
          .where('run_id', '=', c.run_id)
          .where('step_idx', '=', c.step_idx)
          .executeTakeFirst();

  switch (r.action) {
    case CaseAction.CONFIRMED:
    case CaseAction.NOT_EXECUTED: {
      if (!step || !(SETTLE_BY_HAND as readonly string[]).includes(step.status))
        throw new CaseActionError(
          r.caseId,
          `${r.action} settles a step whose outcome is unknown; ${step ? `step ${step.step_idx} is ${step.status}` : 'this case has no step'}`,
        );
      if (r.action === CaseAction.CONFIRMED && !r.externalRef)
        throw new CaseActionError(
          r.caseId,
          'confirmed needs externalRef: the id of the effect, found by hand',
        );
      const cause = `resolved by hand by ${r.actor}${r.comment ? `: ${r.comment}` : ''}`;
      await transitionStep(trx, {
        runId: c.run_id,
        stepIdx: step.step_idx,
        to: r.action === CaseAction.CONFIRMED ? StepStatus.CONFIRMED : StepStatus.NOT_EXECUTED,
        cause,
        actor: r.actor,
        schema: r.schema,
        ...(r.action === CaseAction.CONFIRMED
          ? {
              patch: {
                external_ref: r.externalRef!,
                result: JSON.stringify({ externalRef: r.externalRef, resolvedBy: r.actor }),
              },
            }
          : {}),
      });
      let status = run.status;
      if (
        status === RunStatus.MANUAL_INTERVENTION &&
        run.pivot_idx !== null &&
        step.step_idx >= run.pivot_idx
      ) {
        const approved = await trx
          .selectFrom('approvals')
          .select('id')
          .where('run_id', '=', c.run_id)
          .where('kind', '=', ApprovalKind.PIVOT)
          .where('status', '=', ApprovalStatus.APPROVED)
          .executeTakeFirst();
        if (approved) {
          await transitionRun(trx, {
            runId: c.run_id,
            to: RunStatus.RUNNING,
            onlyFrom: [RunStatus.MANUAL_INTERVENTION],
            reason: `commit step ${step.step_idx} settled by hand by ${r.actor}; the pivot continues`,
            actor: r.actor,
          });
          status = RunStatus.RUNNING;
        }
      }
      if (status === RunStatus.RUNNING && r.action === CaseAction.NOT_EXECUTED)
        await redispatchStep(trx, {
          runId: c.run_id,
          stepIdx: step.step_idx,
          cause: `re-dispatch: ${r.actor} found the effect absent`,
          schema: r.schema,
          // A person's decision: not capped by the re-dispatch budget, whose count starts again here.
          by: { kind: 'person', actor: r.actor },
        });
      if (status === RunStatus.RUNNING) await advanceCommit(trx, c.run_id, r.schema);
      break;
    }
    case CaseAction.RETRY_COMPENSATION: {
      if (run.status !== RunStatus.MANUAL_INTERVENTION && run.status !== RunStatus.COMPENSATING)
        throw new CaseActionError(
          r.caseId,
          `retry_compensation needs a run left to a person; the run is ${run.status}`,
        );
      const comp =
        c.step_idx === null
          ? undefined
          : await trx
              .updateTable('compensations')
              // A person retrying it is the person's decision to send it: a compensation that was held for
              // an approval (and rejected, or expired) is no longer bound to that approval (issue 12).
              .set({
                attempts: 0,
                next_attempt_at: sql<Date>`now()`,
                approval_id: null,
                updated_at: sql<Date>`now()`,
              })
              .where('run_id', '=', c.run_id)
              .where('step_idx', '=', c.step_idx)
              .where('status', 'in', [
                CompensationStatus.FAILED,
                CompensationStatus.UNKNOWN,
                CompensationStatus.PENDING,
              ])
              .returning('status')
              .executeTakeFirst();
      if (!comp) throw new CaseActionError(r.caseId, 'this case has no compensation left to retry');
      // Back to the compensator through startUnwind, which also withdraws anything still waiting to go
      // forward (and NOTIFYs); a run compensating already is only woken.
      if (run.status === RunStatus.MANUAL_INTERVENTION)
        await startUnwind(trx, {
          runId: c.run_id,
          onlyFrom: [RunStatus.MANUAL_INTERVENTION],
          reason: `compensation of step ${c.step_idx} retried by ${r.actor}`,
          actor: r.actor,
          schema: r.schema,
        });
      else await wakeCompensators(trx, r.schema, c.run_id);
      break;
    }
    case CaseAction.RESOLVE_RUN:
      break;
    default: {
      const never: never = r.action;
      throw new Error(`unhandled case action ${String(never)}`);
    }
  }

  const resolution = { action: r.action, externalRef: r.externalRef ?? null, comment: r.comment ?? null };
  const set = {
    resolved_by: r.actor,
    resolved_by_token: r.tokenId ?? null,
    resolved_at: sql<Date>`now()`,
    resolution: JSON.stringify(resolution),
  };
  // `resolve_run` closes every open case of the run (this one among them), under the run's lock.
  const ids =
    r.action === CaseAction.RESOLVE_RUN
      ? (
          await trx
            .selectFrom('cases')
            .select('id')
            .where('run_id', '=', c.run_id)
            .where('status', '=', ReviewStatus.OPEN)
            .orderBy('id')
            .execute()
        ).map((x) => String(x.id))
      : [String(c.id)];
  const closed: CaseRow[] = [];
  for (const id of ids) closed.push(await transitionCase(trx, { id, to: ReviewStatus.RESOLVED, set }));
  await appendStepEvent(trx, {
    runId: c.run_id,
    stepIdx: c.step_idx,
    kind: StepEventKind.DECISION,
    from: ReviewStatus.OPEN,
    to: ReviewStatus.RESOLVED,
    cause: `case ${c.id} resolved (${r.action}) by ${r.actor}${r.comment ? `: ${r.comment}` : ''}`,
    detail: { caseId: String(c.id), ...resolution, closedCases: closed.map((x) => String(x.id)) },
    actor: r.actor,
  });
  return closed.find((x) => String(x.id) === String(c.id))!;
}
