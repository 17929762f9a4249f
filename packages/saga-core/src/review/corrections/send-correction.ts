import { randomUUID } from 'node:crypto';
import type { SagaDb, SagaTrx } from '../../db/connect.js';
import type { CorrectionRow } from '../../db/schema.js';
import { SEND_UNDER_WAY } from './correction-transitions.js';
import { CrashPoint } from '../../process/crash-point.js';
import { CorrectionSendingError, ToolNotRegisteredError } from '../../errors/errors.js';
import type { Logger } from '../../process/logger.js';
import { classifyToolError } from '../../steps/outcome/classify-tool-error.js';
import { CorrectionStatus } from './correction-status.js';
import { StepStatus } from '../../steps/step-status.js';
import { callTool } from '../../tools/call-tool.js';
import type { AnyTool } from '../../tools/define-tool.js';
import { parseArgs } from '../../tools/parse-args.js';
import { errorForLog } from '../../privacy/args-for-log.js';
import type { ToolRegistry } from '../../tools/tool-registry.js';
import { CORRECTION_TOOL, correctionLeaseMs } from './correction-send-key.js';
import { lockCorrection, type CorrectionDecider } from './lock-correction.js';
import { recordCorrectionSend, startCorrectionSend } from './record-correction-send.js';
import { settleCorrectionSend } from './settle-correction-send.js';

export interface SendCorrectionDeps {
  readonly db: SagaDb;
  readonly registry: ToolRegistry;
  readonly log: Logger;
  /** Lease time beyond the email tool's timeout, to record the outcome (LEASE_MARGIN_MS). */
  readonly leaseMarginMs: number;
  /** Pause before a first "not found" of a settling lookup is looked up again (LOOKUP_RECHECK_MS). */
  readonly recheckMs: number;
  /** This process as a lease holder (`api:<pid>`); each send adds its own random suffix. */
  readonly leaseHolder: string;
  /** Named crash points, switched on only by tests (`createCrashPoints(SAGA_CRASH_POINTS)`). */
  readonly crash: (point: CrashPoint) => void;
}

export interface CorrectionSend {
  /** The hash of the message the operator read (`correctionHash`). */
  readonly hash: string;
  readonly comment?: string | undefined;
}

/**
 * What a send came to, for the caller to answer with. A refusal before the call (decided, stale hash, a
 * send under way or not yet provable, no email tool) is thrown instead, having written nothing.
 */
export type CorrectionSendResult =
  /** The vendor took it, or a lookup by its key found it sent: the row as it is now. */
  | { readonly kind: 'sent'; readonly row: CorrectionRow }
  /** The vendor refused it: nothing was sent, the correction is open again. */
  | { readonly kind: 'refused'; readonly row: CorrectionRow; readonly error: unknown }
  /** Nobody knows whether it went out: `unknown` until the email lookup by its key settles it. */
  | { readonly kind: 'unknown'; readonly row: CorrectionRow; readonly error: unknown };

/** What the locked part of a send decided: a send started (with its key and lease), or one to settle first. */
type SendStart =
  | { readonly kind: 'started'; readonly c: CorrectionRow; readonly tool: AnyTool; readonly owner: string }
  | { readonly kind: 'settle'; readonly c: CorrectionRow };

/**
 * Sends a correction a person reviewed, in three stages:
 *
 * 1. under the run's and the row's locks, the refusals (decided, stale hash, no email tool), then `open →
 *    sending` in the same transaction that fixes the key of this message version and a lease of the email
 *    tool's timeout plus `leaseMarginMs`, on the database's clock (`startCorrectionSend`);
 * 2. the vendor call through `callTool`, outside any transaction, with that key;
 * 3. the outcome by compare-and-set under the lease (`recordCorrectionSend`): `sent` with the vendor's ref;
 *    `open` on a refusal (nothing was sent); `unknown` otherwise.
 *
 * A send of a correction already `unknown` (or `sending` past its lease) first settles it by the email
 * lookup by key (`settleCorrectionSend`): found → it is `sent` and nothing goes out; proven absent → it is
 * sent again under the same key; not yet provable → CorrectionSendingError. A send under a live lease is
 * refused the same way. The reconciler's sweep settles such rows too, when nobody sends again.
 */
export async function sendCorrection(
  d: SendCorrectionDeps,
  id: string,
  who: CorrectionDecider,
  send: CorrectionSend,
): Promise<CorrectionSendResult> {
  // Why 2 passes: one to settle an unknown send, one to send what the settle proved absent.
  for (let pass = 0; pass < 2; pass++) {
    const start = await d.db.transaction().execute((trx) => beginSend(d, trx, id, who, send));
    if (start.kind === 'started') return callAndRecord(d, start);
    const settled = await settleCorrectionSend(
      { db: d.db, registry: d.registry, recheckMs: d.recheckMs, log: d.log },
      start.c,
    );
    switch (settled.kind) {
      case 'sent':
        return { kind: 'sent', row: settled.row };
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
  const now = await readCorrection(d.db, id);
  throw new CorrectionSendingError(id, now.status);
}

async function beginSend(
  d: SendCorrectionDeps,
  trx: SagaTrx,
  id: string,
  who: CorrectionDecider,
  send: CorrectionSend,
): Promise<SendStart> {
  const row = await lockCorrection(trx, id, who, send.hash);
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
  const owner = `${d.leaseHolder}:${randomUUID()}`;
  const c = await startCorrectionSend(trx, {
    correction: row,
    forwardTool: step.tool,
    owner,
    leaseMs: correctionLeaseMs(tool, d.leaseMarginMs),
    actor: who.actor,
    tokenId: who.tokenId ?? null,
    comment: send.comment ?? null,
  });
  return { kind: 'started', c, tool, owner };
}

async function callAndRecord(
  d: SendCorrectionDeps,
  s: Extract<SendStart, { kind: 'started' }>,
): Promise<CorrectionSendResult> {
  const { c, tool, owner } = s;
  const key = c.idempotency_key!;
  const log = d.log.child({ runId: c.run_id, stepIdx: c.step_idx, key, correctionId: String(c.id) });
  const call = await callTool(tool, parseArgs(tool, c.command), {
    idempotencyKey: key,
    runId: c.run_id,
    stepIdx: c.step_idx,
    tenantId: c.tenant_id,
    attempt: 1,
    logger: log,
  });
  d.crash(CrashPoint.AFTER_CORRECTION_SEND_BEFORE_RECORD);
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
  const row = recorded ?? (await readCorrection(d.db, String(c.id)));
  if (call.ok) return { kind: 'sent', row };
  // The command is a message to a person: an error may quote its recipient, hidden as the email tool declares.
  log.warn(
    { err: errorForLog(call.error, tool, c.command), outcome: failure!.status },
    'correction not sent',
  );
  if (row.status === CorrectionStatus.SENT) return { kind: 'sent', row };
  return failure!.status === StepStatus.FAILED
    ? { kind: 'refused', row, error: call.error }
    : { kind: 'unknown', row, error: call.error };
}

function readCorrection(db: SagaDb, id: string): Promise<CorrectionRow> {
  return db.selectFrom('corrections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}
