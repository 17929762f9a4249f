import { z } from 'zod';

/**
 * Schemas of the items people decide on: approvals (with the exact steps they release), manual-intervention
 * cases and corrections. As in `run-view.ts`, statuses stay strings and unknown fields are kept
 * (`looseObject`), so a newer dispatcher's additions reach the caller instead of failing the read.
 */

/** One step an approval releases, with the exact arguments that will execute (secret fields redacted). */
export const proposedStepSchema = z.looseObject({
  stepIdx: z.number().int().nonnegative(),
  tool: z.string(),
  toolClass: z.string(),
  idempotencyKey: z.string(),
  args: z.unknown(),
  audience: z.array(z.string()),
  status: z.string(),
});
export type ProposedStep = z.infer<typeof proposedStepSchema>;

/** A step done before the proposal (a draft, a hold) that the decision builds on. */
export const stagedEffectSchema = z.looseObject({
  stepIdx: z.number().int().nonnegative(),
  tool: z.string(),
  class: z.string().optional(),
  externalRef: z.string().nullable().optional(),
  /** When a hold this proposal relies on runs out (a card authorisation lasts about seven days). */
  holdEndsAt: z.string().nullable().optional(),
});
export type StagedEffect = z.infer<typeof stagedEffectSchema>;

/**
 * What an approver reads beside the steps. Every field is optional: a held step and a pivot fill them
 * differently (`action` for one step, `actions` for a pivot), and the rest is kept as it came.
 */
export const approvalEvidenceSchema = z.looseObject({
  /** Everyone who will see the effects (`customer` among them means a person outside can tell). */
  audience: z.array(z.string()).optional(),
  staged: z.array(stagedEffectSchema).optional(),
  /** What cannot be taken back once approved, in words. */
  residualRisk: z.string().optional(),
  deadline: z.string().optional(),
});
export type ApprovalEvidence = z.infer<typeof approvalEvidenceSchema>;

/**
 * The stable id (`tok_…`) of the token that decided, beside its label; null when undecided, decided before
 * the server recorded it, or by no token. Absent from an older server's answer: read as null.
 */
const deciderTokenIdSchema = z.string().nullable().default(null);

/** `GET /v1/approvals/{id}`: one complete proposal, its hash and deadline. */
export const approvalViewSchema = z.looseObject({
  id: z.string(),
  runId: z.string(),
  kind: z.string(),
  status: z.string(),
  /** A decision must carry this hash: it binds the decision to what will execute. */
  hash: z.string(),
  expiresAt: z.string(),
  summary: z.string().nullable(),
  steps: z.array(proposedStepSchema),
  evidence: approvalEvidenceSchema,
  /** The deciding token's label (or `token:<id>`). */
  decidedBy: z.string().nullable(),
  decidedByTokenId: deciderTokenIdSchema,
  decidedAt: z.string().nullable(),
  comment: z.string().nullable(),
  createdAt: z.string(),
});
export type ApprovalView = z.infer<typeof approvalViewSchema>;

/** `POST /v1/runs/{runId}/pivot` → 202: the approval that now holds the run. */
export const pivotProposalSchema = z.looseObject({
  runId: z.string(),
  status: z.string(),
  approvalId: z.string(),
  hash: z.string(),
  expiresAt: z.string(),
});
export type PivotProposal = z.infer<typeof pivotProposalSchema>;

/** A manual-intervention case: why the harness gave up, and everything it saw. */
export const caseViewSchema = z.looseObject({
  id: z.string(),
  runId: z.string(),
  /** Null for a case about the whole run. */
  stepIdx: z.number().int().nullable(),
  tool: z.string().nullable(),
  reason: z.string(),
  /** Every lookup, attempt and error, with their times; shape is the harness's. */
  evidence: z.record(z.string(), z.unknown()),
  status: z.string(),
  /** The resolving token's label (or `token:<id>`). */
  resolvedBy: z.string().nullable(),
  resolvedByTokenId: deciderTokenIdSchema,
  resolvedAt: z.string().nullable(),
  resolution: z.record(z.string(), z.unknown()).nullable(),
  createdAt: z.string(),
});
export type CaseView = z.infer<typeof caseViewSchema>;

/** A correction waiting for a person: the pre-written message and who would read it. */
export const correctionViewSchema = z.looseObject({
  id: z.string(),
  runId: z.string(),
  stepIdx: z.number().int(),
  /** The forward tool whose effect the correction answers. */
  tool: z.string().nullable(),
  command: z.record(z.string(), z.unknown()),
  audience: z.array(z.string()),
  status: z.string(),
  /** A send (or edit) must carry this hash: it binds the send to this exact message. */
  hash: z.string(),
  idempotencyKey: z.string().nullable(),
  externalRef: z.string().nullable(),
  /** The deciding token's label (or `token:<id>`). */
  decidedBy: z.string().nullable(),
  decidedByTokenId: deciderTokenIdSchema,
  decidedAt: z.string().nullable(),
  comment: z.string().nullable(),
  createdAt: z.string(),
});
export type CorrectionView = z.infer<typeof correctionViewSchema>;

export const approvalListSchema = z.looseObject({ approvals: z.array(approvalViewSchema) });
export const caseListSchema = z.looseObject({ cases: z.array(caseViewSchema) });
export const correctionListSchema = z.looseObject({ corrections: z.array(correctionViewSchema) });
