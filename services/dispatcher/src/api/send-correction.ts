import { sql } from 'kysely';
import {
  ApprovalDecidedError,
  ApprovalHashMismatchError,
  classifyToolError,
  correctionHash,
  CorrectionStatus,
  lockReviewItem,
  OutcomeUnknownError,
  parseArgs,
  StepEventKind,
  StepStatus,
  stepKey,
  ToolNotRegisteredError,
  appendStepEvent,
  type CorrectionRow,
  type Logger,
  type SagaDb,
  type SagaTrx,
  type ToolRegistry,
} from '@agent-saga/core';
import { callTool } from '../executor/call-tool.js';

/**
 * The tool a correction is sent with. A stored correction is a message (`{ template, to, vars }`, see
 * `CorrectionCommand`), so it goes out through the registry's email tool, under its own key.
 */
export const CORRECTION_TOOL = 'send_email';

/** The correction could not be sent: the vendor refused it (nothing was sent), or nobody knows. */
export class CorrectionNotSentError extends Error {
  constructor(
    readonly code: 'CORRECTION_REFUSED' | 'CORRECTION_OUTCOME_UNKNOWN',
    message: string,
    readonly correction: CorrectionRow,
  ) {
    super(message);
  }
}

interface Decider {
  readonly tenantId: string;
  readonly actor: string;
}

/**
 * Locks an open correction of this tenant (the run first, as every decision does) and checks the hash of the
 * command the operator saw. Refusals write nothing: missing or another tenant's (404), decided (409
 * APPROVAL_DECIDED), edited since (409 APPROVAL_HASH_MISMATCH).
 */
async function lockOpenCorrection(
  trx: SagaTrx,
  id: string,
  who: Decider,
  hash: string | null,
): Promise<CorrectionRow> {
  await lockReviewItem(trx, 'corrections', id, who.tenantId);
  const c = await trx.selectFrom('corrections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  if (c.status !== CorrectionStatus.OPEN) throw new ApprovalDecidedError(`correction ${id}`, c.status);
  if (hash !== null && hash !== correctionHash(c.command))
    throw new ApprovalHashMismatchError(`correction ${id}`, hash);
  return c;
}

async function decisionEvent(
  trx: SagaTrx,
  c: CorrectionRow,
  to: string,
  who: Decider,
  cause: string,
  detail: Record<string, unknown>,
): Promise<void> {
  await appendStepEvent(trx, {
    runId: c.run_id,
    stepIdx: c.step_idx,
    kind: StepEventKind.DECISION,
    from: CorrectionStatus.OPEN,
    to,
    cause,
    detail: { correctionId: String(c.id), ...detail },
    actor: who.actor,
  });
}

/**
 * Sends a correction a person reviewed. The intent comes first: the key (`correct:<forward tool>` of the
 * step) is written and the request recorded as an event, committed before the call. The call goes out
 * with that key, so a send repeated after an unknown outcome reaches the vendor as the same message (its
 * idempotency key) and never as a second one. On success the correction is `sent` with the vendor's ref; a
 * refusal leaves it open (nothing was sent); an unknown outcome leaves it open with its key, to send again.
 */
export async function sendCorrection(
  d: { readonly db: SagaDb; readonly registry: ToolRegistry; readonly logger: Logger },
  id: string,
  who: Decider,
  body: { readonly hash: string; readonly comment?: string | undefined },
): Promise<CorrectionRow> {
  const registered = d.registry.get(CORRECTION_TOOL);
  const { c, tool } = await d.db.transaction().execute(async (trx) => {
    const row = await lockOpenCorrection(trx, id, who, body.hash);
    // After the refusals of what the operator sent (stale hash, decided), so those come first.
    if (!registered) throw new ToolNotRegisteredError(CORRECTION_TOOL);
    const step = await trx
      .selectFrom('saga_log')
      .select('tool')
      .where('run_id', '=', row.run_id)
      .where('step_idx', '=', row.step_idx)
      .executeTakeFirstOrThrow();
    const key = row.idempotency_key ?? stepKey(row.run_id, row.step_idx, `correct:${step.tool}`);
    const updated = await trx
      .updateTable('corrections')
      .set({ idempotency_key: key })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await decisionEvent(trx, row, CorrectionStatus.OPEN, who, `correction send requested by ${who.actor}`, {
      key,
    });
    return { c: updated, tool: registered };
  });
  const args = parseArgs(tool, c.command);
  const log = d.logger.child({ runId: c.run_id, stepIdx: c.step_idx, key: c.idempotency_key });
  const call = await callTool(
    tool,
    args,
    {
      idempotencyKey: c.idempotency_key!,
      runId: c.run_id,
      stepIdx: c.step_idx,
      tenantId: c.tenant_id,
      attempt: 1,
      logger: log,
    },
    new AbortController().signal,
  );
  if (!call.ok) {
    const outcome = classifyToolError(call.error, call.reason);
    log.warn({ err: call.error, outcome: outcome.status }, 'correction not sent');
    throw new CorrectionNotSentError(
      outcome.status === StepStatus.FAILED ? 'CORRECTION_REFUSED' : 'CORRECTION_OUTCOME_UNKNOWN',
      outcome.status === StepStatus.FAILED
        ? `the vendor refused the correction; nothing was sent: ${errorMessage(call.error)}`
        : `the outcome of the send is unknown (${errorMessage(call.error)}); send again: the same key makes a repeat safe`,
      c,
    );
  }
  return d.db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('corrections')
      .set({
        status: CorrectionStatus.SENT,
        external_ref: call.effect.externalRef ?? null,
        decided_by: who.actor,
        decided_at: sql<Date>`now()`,
        comment: body.comment ?? null,
      })
      .where('id', '=', c.id)
      .where('status', '=', CorrectionStatus.OPEN)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new ApprovalDecidedError(`correction ${id}`, 'decided');
    await decisionEvent(trx, row, CorrectionStatus.SENT, who, `correction sent by ${who.actor}`, {
      key: row.idempotency_key,
      externalRef: row.external_ref,
    });
    return row;
  });
}

/** Edits a correction's template variables: a new proposal with a new hash, never a silent change. */
export async function editCorrection(
  db: SagaDb,
  id: string,
  who: Decider,
  body: { readonly hash: string; readonly vars: Record<string, unknown> },
): Promise<CorrectionRow> {
  return db.transaction().execute(async (trx) => {
    const c = await lockOpenCorrection(trx, id, who, body.hash);
    const command = { ...c.command, vars: body.vars };
    const row = await trx
      .updateTable('corrections')
      .set({ command: JSON.stringify(command) })
      .where('id', '=', c.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await decisionEvent(trx, c, CorrectionStatus.OPEN, who, `correction edited by ${who.actor}`, {
      previousHash: body.hash,
      hash: correctionHash(command),
    });
    return row;
  });
}

/** Dismisses a correction: a person decided the customer needs no message. */
export async function dismissCorrection(
  db: SagaDb,
  id: string,
  who: Decider,
  body: { readonly comment?: string | undefined },
): Promise<CorrectionRow> {
  return db.transaction().execute(async (trx) => {
    const c = await lockOpenCorrection(trx, id, who, null);
    const row = await trx
      .updateTable('corrections')
      .set({
        status: CorrectionStatus.DISMISSED,
        decided_by: who.actor,
        decided_at: sql<Date>`now()`,
        comment: body.comment ?? null,
      })
      .where('id', '=', c.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await decisionEvent(trx, c, CorrectionStatus.DISMISSED, who, `correction dismissed by ${who.actor}`, {
      comment: body.comment ?? null,
    });
    return row;
  });
}

function errorMessage(err: unknown): string {
  if (err instanceof OutcomeUnknownError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
