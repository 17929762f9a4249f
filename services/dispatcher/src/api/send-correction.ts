import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  ApprovalDecidedError,
  ApprovalHashMismatchError,
  callTool,
  classifyToolError,
  CORRECTION_TOOL,
  correctionHash,
  correctionLeaseMs,
  CorrectionSendingError,
  CorrectionStatus,
  CrashPoint,
  createCrashPoints,
  InvalidCorrectionTransitionError,
  lockReviewItem,
  OutcomeUnknownError,
  parseArgs,
  recordCorrectionSend,
  reviseCorrection,
  SEND_UNDER_WAY,
  settleCorrectionSend,
  startCorrectionSend,
  StepStatus,
  ToolNotRegisteredError,
  transitionCorrection,
  type AnyTool,
  type CorrectionRow,
  type Logger,
  type SagaDb,
  type SagaTrx,
  type ToolRegistry,
} from '@agent-saga/core';
import type { DispatcherConfig } from '../config.js';

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

export interface SendCorrectionDeps {
  readonly db: SagaDb;
  readonly registry: ToolRegistry;
  readonly logger: Logger;
  readonly config: Pick<DispatcherConfig, 'LEASE_MARGIN_MS' | 'LOOKUP_RECHECK_MS' | 'SAGA_CRASH_POINTS'>;
}

/**
 * Locks a correction of this tenant (the run first, as every decision does) and refuses what no decision
 * may do to it, before any write: missing or another tenant's (404), sent or dismissed (409
 * APPROVAL_DECIDED), edited since the operator read it (409 APPROVAL_HASH_MISMATCH, when `hash` is given).
 * A correction whose send is under way or unknown is returned as is: each decision says what it does then.
 */
async function lockCorrection(
  trx: SagaTrx,
  id: string,
  who: Decider,
  hash: string | null,
): Promise<CorrectionRow> {
  await lockReviewItem(trx, 'corrections', id, who.tenantId);
  const c = await trx.selectFrom('corrections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  if (c.status === CorrectionStatus.SENT || c.status === CorrectionStatus.DISMISSED)
    throw new ApprovalDecidedError(`correction ${id}`, c.status);
  if (hash !== null && hash !== correctionHash(c.command))
    throw new ApprovalHashMismatchError(`correction ${id}`, hash);
  return c;
}

/** Refuses to change a correction whose send has started and is not settled (409 CORRECTION_SENDING). */
function refuseWhileSending(c: CorrectionRow): void {
  if (SEND_UNDER_WAY.includes(c.status)) throw new CorrectionSendingError(String(c.id), c.status);
}

/** What the locked part of a send decided: a send started (with its key and lease), or one to settle first. */
type SendStart =
  | { readonly kind: 'started'; readonly c: CorrectionRow; readonly tool: AnyTool; readonly owner: string }
  | { readonly kind: 'settle'; readonly c: CorrectionRow };

/**
 * Sends a correction a person reviewed, in three stages:
 *
 * 1. under the run's and the row's locks, the refusals (decided, stale hash, no email tool), then `open →
 *    sending` in the same transaction that fixes the key of this message version and a lease of the email
 *    tool's timeout plus LEASE_MARGIN_MS, on the database's clock (`startCorrectionSend`);
 * 2. the vendor call through core's `callTool`, outside any transaction, with that key;
 * 3. the outcome by compare-and-set under the lease (`recordCorrectionSend`): `sent` with the vendor's ref;
 *    `open` on a refusal (nothing was sent: 422); `unknown` otherwise (502).
 *
 * A send of a correction already `unknown` (or `sending` past its lease) first settles it by the email
 * lookup by key (`settleCorrectionSend`): found → it is `sent` and nothing goes out; proven absent → it is
 * sent again under the same key; not yet provable → 409 CORRECTION_SENDING. A send under a live lease is
 * refused the same way. The reconciler's sweep settles such rows too, when nobody sends again.
 */
export async function sendCorrection(
  d: SendCorrectionDeps,
  id: string,
  who: Decider,
  body: { readonly hash: string; readonly comment?: string | undefined },
): Promise<CorrectionRow> {
  // Why 2 passes: one to settle an unknown send, one to send what the settle proved absent.
  for (let pass = 0; pass < 2; pass++) {
    const start = await d.db.transaction().execute((trx) => beginSend(d, trx, id, who, body));
    if (start.kind === 'started') return callAndRecord(d, start);
    const settled = await settleCorrectionSend(
      { db: d.db, registry: d.registry, recheckMs: d.config.LOOKUP_RECHECK_MS, log: d.logger },
      start.c,
    );
    switch (settled.kind) {
      case 'sent':
        return settled.row;
      case 'reopened':
      case 'moved':
        continue;
      case 'too-early':
        throw new CorrectionSendingError(id, CorrectionStatus.UNKNOWN, settled.believableAt);
      case 'in-flight':
      case 'lookup-error':
      case 'no-tool':
        throw new CorrectionSendingError(id, start.c.status);
      default: {
        const never: never = settled;
        throw new Error(`unhandled settlement ${JSON.stringify(never)}`);
      }
    }
  }
  const now = await d.db.selectFrom('corrections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  throw new CorrectionSendingError(id, now.status);
}

async function beginSend(
  d: SendCorrectionDeps,
  trx: SagaTrx,
  id: string,
  who: Decider,
  body: { readonly hash: string; readonly comment?: string | undefined },
): Promise<SendStart> {
  const row = await lockCorrection(trx, id, who, body.hash);
  if (SEND_UNDER_WAY.includes(row.status)) return { kind: 'settle', c: row };
  // After the refusals of what the operator sent (stale hash, decided), so those come first.
  const tool = d.registry.get(CORRECTION_TOOL);
  if (!tool) throw new ToolNotRegisteredError(CORRECTION_TOOL);
  const step = await trx
    .selectFrom('saga_log')
    .select('tool')
    .where('run_id', '=', row.run_id)
    .where('step_idx', '=', row.step_idx)
    .executeTakeFirstOrThrow();
  const owner = `api:${process.pid}:${randomUUID()}`;
  const c = await startCorrectionSend(trx, {
    correction: row,
    forwardTool: step.tool,
    owner,
    leaseMs: correctionLeaseMs(tool, d.config.LEASE_MARGIN_MS),
    actor: who.actor,
    comment: body.comment ?? null,
  });
  return { kind: 'started', c, tool, owner };
}

async function callAndRecord(
  d: SendCorrectionDeps,
  s: Extract<SendStart, { kind: 'started' }>,
): Promise<CorrectionRow> {
  const { c, tool, owner } = s;
  const key = c.idempotency_key!;
  const log = d.logger.child({ runId: c.run_id, stepIdx: c.step_idx, key, correctionId: String(c.id) });
  const call = await callTool(tool, parseArgs(tool, c.command), {
    idempotencyKey: key,
    runId: c.run_id,
    stepIdx: c.step_idx,
    tenantId: c.tenant_id,
    attempt: 1,
    logger: log,
  });
  createCrashPoints(d.config.SAGA_CRASH_POINTS)(CrashPoint.AFTER_CORRECTION_SEND_BEFORE_RECORD);
  const failure = call.ok ? null : classifyToolError(call.error, call.reason);
  const recorded = await recordCorrectionSend(d.db, {
    id: String(c.id),
    key,
    owner,
    outcome: call.ok
      ? { kind: 'sent', effect: call.effect, durationMs: call.durationMs }
      : { kind: failure!.status === StepStatus.FAILED ? 'refused' : 'unknown', error: failure!.error },
  });
  // Moved meanwhile (our lease ran out and the sweep settled it): answer with what the row says now.
  const row =
    recorded ??
    (await d.db
      .selectFrom('corrections')
      .selectAll()
      .where('id', '=', String(c.id))
      .executeTakeFirstOrThrow());
  if (call.ok) return row;
  log.warn({ err: call.error, outcome: failure!.status }, 'correction not sent');
  if (row.status === CorrectionStatus.SENT) return row;
  throw new CorrectionNotSentError(
    failure!.status === StepStatus.FAILED ? 'CORRECTION_REFUSED' : 'CORRECTION_OUTCOME_UNKNOWN',
    failure!.status === StepStatus.FAILED
      ? `the vendor refused the correction; nothing was sent: ${errorMessage(call.error)}`
      : `the outcome of the send is unknown (${errorMessage(call.error)}); it is settled by the email lookup ` +
          'by its key (send again to settle it now: found, nothing is sent; proven absent, the same key is sent)',
    row,
  );
}

/**
 * Edits a correction's template variables: a new version with a new hash (and, when sent, a new key), never
 * a silent change. Refused while a send is under way or unknown (409 CORRECTION_SENDING).
 */
export async function editCorrection(
  db: SagaDb,
  id: string,
  who: Decider,
  body: { readonly hash: string; readonly vars: Record<string, unknown> },
): Promise<CorrectionRow> {
  return db.transaction().execute(async (trx) => {
    const c = await lockCorrection(trx, id, who, body.hash);
    refuseWhileSending(c);
    const command = { ...c.command, vars: body.vars };
    return reviseCorrection(trx, {
      id,
      command,
      actor: who.actor,
      detail: { previousHash: body.hash, hash: correctionHash(command) },
    }).catch(rethrowAsRefusal(id));
  });
}

/**
 * Dismisses a correction: a person decided the customer needs no message. Refused while a send is under way
 * or unknown (409 CORRECTION_SENDING): that message may be out.
 */
export async function dismissCorrection(
  db: SagaDb,
  id: string,
  who: Decider,
  body: { readonly comment?: string | undefined },
): Promise<CorrectionRow> {
  return db.transaction().execute(async (trx) => {
    const c = await lockCorrection(trx, id, who, null);
    refuseWhileSending(c);
    return transitionCorrection(trx, {
      id,
      to: CorrectionStatus.DISMISSED,
      cause: `correction dismissed by ${who.actor}`,
      actor: who.actor,
      detail: { comment: body.comment ?? null },
      patch: { decided_by: who.actor, decided_at: sql<Date>`now()`, comment: body.comment ?? null },
    }).catch(rethrowAsRefusal(id));
  });
}

/** A compare-and-set lost under our own locks cannot happen; should it, it is the refusal of its state. */
function rethrowAsRefusal(id: string) {
  return (err: unknown): never => {
    if (err instanceof InvalidCorrectionTransitionError && err.from !== null)
      throw SEND_UNDER_WAY.includes(err.from as CorrectionStatus)
        ? new CorrectionSendingError(id, err.from)
        : new ApprovalDecidedError(`correction ${id}`, err.from);
    throw err;
  };
}

function errorMessage(err: unknown): string {
  if (err instanceof OutcomeUnknownError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
