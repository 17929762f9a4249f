import { requestJson, withQuery, type Transport } from './http.js';
import {
  approvalListSchema,
  approvalViewSchema,
  caseListSchema,
  caseViewSchema,
  correctionListSchema,
  correctionViewSchema,
  type ApprovalView,
  type CaseView,
  type CorrectionView,
} from './review-views.js';
import type {
  ApprovalKind,
  ApprovalStatus,
  CaseAction,
  CaseStatus,
  CorrectionStatus,
  Decision,
} from './statuses.js';

/**
 * The operator's side of the dispatcher: the approval inbox, the manual-intervention cases and the
 * corrections queue. Any token of the tenant may read them; deciding, resolving, sending, editing and
 * dismissing need an operator token (`ForbiddenError` otherwise). Another tenant's item is a
 * `NotFoundError`, exactly like a missing one.
 *
 * Every decision that acts on something a person read carries that thing's `hash` (an approval's
 * proposal, a correction's message). The dispatcher refuses a hash that is no longer current with
 * `ApprovalHashMismatchError`: a decision is bound to what the person saw, never to whatever is there now.
 */
export interface ReviewMethods {
  /** The tenant's approvals, soonest deadline first. */
  listApprovals(
    query?: ReviewQuery<ApprovalStatus> & { readonly kind?: ApprovalKind },
  ): Promise<readonly ApprovalView[]>;
  /** One approval: the complete proposal, its hash, deadline and evidence. */
  getApproval(approvalId: string): Promise<ApprovalView>;
  /**
   * Approves or rejects a pending approval. `hash` must be the hash of the proposal as the operator read
   * it. Refusals: `ApprovalHashMismatchError` (the proposal changed), `ApprovalDecidedError` (decided,
   * superseded), `ApprovalExpiredError` (past the deadline), `RunNotRunningError` (the run no longer
   * waits for it: unwound or ended; nothing decided), `ForbiddenError` (not an operator token).
   */
  decideApproval(approvalId: string, input: DecisionInput): Promise<ApprovalView>;
  /** The tenant's manual-intervention cases, oldest first, with their evidence. */
  listCases(query?: ReviewQuery<CaseStatus>): Promise<readonly CaseView[]>;
  /**
   * Resolves an open case: `confirmed` (with `externalRef`, found by hand) or `not_executed` settle its
   * step; `retry_compensation` gives the compensation a fresh attempt budget; `resolve_run` closes the
   * run's cases. A resolved case, or an action that does not fit it: `CaseActionRefusedError`.
   */
  resolveCase(caseId: string, input: CaseResolutionInput): Promise<CaseView>;
  /** The tenant's corrections, internal audiences first, customer-facing last. */
  listCorrections(query?: ReviewQuery<CorrectionStatus>): Promise<readonly CorrectionView[]>;
  /**
   * Sends a correction whose message (`hash`) the operator read, through the intent log with its own key.
   * `CorrectionRefusedError`: the vendor said no, nothing was sent. `CorrectionOutcomeUnknownError`: send
   * it again (same key, same message).
   */
  sendCorrection(correctionId: string, input: CorrectionSendInput): Promise<CorrectionView>;
  /** Replaces the message's template variables: a new message with a new hash, to be read and sent anew. */
  editCorrection(correctionId: string, input: CorrectionEditInput): Promise<CorrectionView>;
  /** Dismisses a correction: no message is sent (the customer never saw the original, say). */
  dismissCorrection(correctionId: string, input?: CorrectionDismissInput): Promise<CorrectionView>;
}

/** Filters of the review lists; absent ones are not sent (every status, every run, 100 items). */
export interface ReviewQuery<S extends string> {
  readonly status?: S;
  readonly runId?: string;
  /** 1 to 500. */
  readonly limit?: number;
}

export interface DecisionInput {
  readonly decision: Decision;
  /** The hash of the proposal as the operator read it. */
  readonly hash: string;
  readonly comment?: string;
}

export interface CaseResolutionInput {
  readonly action: CaseAction;
  /** For `confirmed`: the effect's id in the real system. */
  readonly externalRef?: string;
  readonly comment?: string;
}

export interface CorrectionSendInput {
  /** The hash of the message as the operator read it. */
  readonly hash: string;
  readonly comment?: string;
}

export interface CorrectionEditInput {
  /** The hash of the message being edited. */
  readonly hash: string;
  readonly vars: Readonly<Record<string, unknown>>;
}

export interface CorrectionDismissInput {
  readonly comment?: string;
}

/** The review methods over one transport; `createSagaClient` spreads them into the client. */
export function createReviewMethods(transport: Transport): ReviewMethods {
  const item = (collection: string, id: string) => {
    if (typeof id !== 'string' || id === '') throw new TypeError(`${collection}: an id is required`);
    return `/v1/${collection}/${encodeURIComponent(id)}`;
  };
  const list = (collection: string, q: ReviewQuery<string> & { readonly kind?: string }) =>
    withQuery(`/v1/${collection}`, { status: q.status, kind: q.kind, runId: q.runId, limit: q.limit });
  const requireHash = (what: string, hash: string) => {
    if (typeof hash !== 'string' || hash === '')
      throw new TypeError(`${what}: hash is required (the hash of what the operator read)`);
  };

  return {
    async listApprovals(query = {}) {
      const { data } = await requestJson(transport, {
        method: 'GET',
        path: list('approvals', query),
        ok: [200],
        schema: approvalListSchema,
      });
      return data.approvals;
    },

    async getApproval(approvalId) {
      const { data } = await requestJson(transport, {
        method: 'GET',
        path: item('approvals', approvalId),
        ok: [200],
        schema: approvalViewSchema,
      });
      return data;
    },

    async decideApproval(approvalId, { decision, hash, comment }) {
      requireHash('decideApproval', hash);
      const { data } = await requestJson(transport, {
        method: 'POST',
        path: `${item('approvals', approvalId)}/decision`,
        body: { decision, hash, comment },
        ok: [200],
        schema: approvalViewSchema,
      });
      return data;
    },

    async listCases(query = {}) {
      const { data } = await requestJson(transport, {
        method: 'GET',
        path: list('cases', query),
        ok: [200],
        schema: caseListSchema,
      });
      return data.cases;
    },

    async resolveCase(caseId, { action, externalRef, comment }) {
      const { data } = await requestJson(transport, {
        method: 'POST',
        path: `${item('cases', caseId)}/resolve`,
        body: { action, externalRef, comment },
        ok: [200],
        schema: caseViewSchema,
      });
      return data;
    },

    async listCorrections(query = {}) {
      const { data } = await requestJson(transport, {
        method: 'GET',
        path: list('corrections', query),
        ok: [200],
        schema: correctionListSchema,
      });
      return data.corrections;
    },

    async sendCorrection(correctionId, { hash, comment }) {
      requireHash('sendCorrection', hash);
      const { data } = await requestJson(transport, {
        method: 'POST',
        path: `${item('corrections', correctionId)}/send`,
        body: { hash, comment },
        ok: [200],
        schema: correctionViewSchema,
      });
      return data;
    },

    async editCorrection(correctionId, { hash, vars }) {
      requireHash('editCorrection', hash);
      const { data } = await requestJson(transport, {
        method: 'POST',
        path: `${item('corrections', correctionId)}/edit`,
        body: { hash, vars },
        ok: [200],
        schema: correctionViewSchema,
      });
      return data;
    },

    async dismissCorrection(correctionId, input = {}) {
      const { data } = await requestJson(transport, {
        method: 'POST',
        path: `${item('corrections', correctionId)}/dismiss`,
        body: { comment: input.comment },
        ok: [200],
        schema: correctionViewSchema,
      });
      return data;
    },
  };
}
