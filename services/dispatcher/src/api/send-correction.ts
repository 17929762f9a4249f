import {
  createCrashPoints,
  dismissCorrection as dismissInCore,
  editCorrection as editInCore,
  ErrorCode,
  OutcomeUnknownError,
  SagaError,
  sendCorrection as sendInCore,
  type CorrectionDecider,
  type CorrectionRow,
  type Logger,
  type SagaDb,
  type ToolRegistry,
} from '@agent-saga/core';
import type { DispatcherConfig } from '../config.js';

/** The correction could not be sent: the vendor refused it, or nobody knows (the two subclasses). */
export abstract class CorrectionNotSentError extends SagaError {
  constructor(
    message: string,
    readonly correction: CorrectionRow,
  ) {
    super(message);
  }

  override httpFields() {
    return { correctionId: String(this.correction.id) };
  }
}

/** The vendor refused the correction: nothing was sent, and it is open again. */
export class CorrectionRefusedError extends CorrectionNotSentError {
  readonly code = ErrorCode.CORRECTION_REFUSED;
  override readonly httpStatus = 422;
}

/** Nobody knows whether the correction went out: the email lookup by its key settles it. */
export class CorrectionOutcomeUnknownError extends CorrectionNotSentError {
  readonly code = ErrorCode.CORRECTION_OUTCOME_UNKNOWN;
  override readonly httpStatus = 502;
}

export interface SendCorrectionDeps {
  readonly db: SagaDb;
  readonly registry: ToolRegistry;
  readonly logger: Logger;
  readonly config: Pick<DispatcherConfig, 'LEASE_MARGIN_MS' | 'LOOKUP_RECHECK_MS' | 'SAGA_CRASH_POINTS'>;
}

/**
 * `POST /corrections/{id}/send`: core's `sendCorrection` (the refusals, `open → sending` under a lease, the
 * vendor call with the send's key, the outcome by compare-and-set, and the settle of an unknown send by the
 * lookup by key first), answered for HTTP: the row when it was sent; a vendor refusal (nothing was sent,
 * open again) is 422 CORRECTION_REFUSED, an unknown outcome 502 CORRECTION_OUTCOME_UNKNOWN. Core's
 * refusals (decided, stale hash, a send under way or not yet provable) are mapped by `toHttpError`.
 */
export async function sendCorrection(
  d: SendCorrectionDeps,
  id: string,
  who: CorrectionDecider,
  body: { readonly hash: string; readonly comment?: string | undefined },
): Promise<CorrectionRow> {
  const sent = await sendInCore(
    {
      db: d.db,
      registry: d.registry,
      log: d.logger,
      leaseMarginMs: d.config.LEASE_MARGIN_MS,
      recheckMs: d.config.LOOKUP_RECHECK_MS,
      leaseHolder: `api:${process.pid}`,
      crash: createCrashPoints(d.config.SAGA_CRASH_POINTS),
    },
    id,
    who,
    body,
  );
  switch (sent.kind) {
    case 'sent':
      return sent.row;
    case 'refused':
      throw new CorrectionRefusedError(
        `the vendor refused the correction; nothing was sent: ${errorMessage(sent.error)}`,
        sent.row,
      );
    case 'unknown':
      throw new CorrectionOutcomeUnknownError(
        `the outcome of the send is unknown (${errorMessage(sent.error)}); it is settled by the email lookup ` +
          'by its key (send again to settle it now: found, nothing is sent; proven absent, the same key is sent)',
        sent.row,
      );
    default: {
      const never: never = sent;
      throw new Error(`unhandled send result ${JSON.stringify(never)}`);
    }
  }
}

/** `POST /corrections/{id}/edit`: core's `editCorrection` in one transaction (a new version, a new hash). */
export async function editCorrection(
  db: SagaDb,
  id: string,
  who: CorrectionDecider,
  body: { readonly hash: string; readonly vars: Record<string, unknown> },
): Promise<CorrectionRow> {
  return db.transaction().execute((trx) => editInCore(trx, id, who, body));
}

/** `POST /corrections/{id}/dismiss`: core's `dismissCorrection` in one transaction. */
export async function dismissCorrection(
  db: SagaDb,
  id: string,
  who: CorrectionDecider,
  body: { readonly comment?: string | undefined },
): Promise<CorrectionRow> {
  return db.transaction().execute((trx) => dismissInCore(trx, id, who, body.comment ?? null));
}

function errorMessage(err: unknown): string {
  if (err instanceof OutcomeUnknownError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
