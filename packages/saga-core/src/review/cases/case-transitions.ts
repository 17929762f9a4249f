import { ReviewStatus } from './case-status.js';

/**
 * The state machine of a manual-intervention case (`cases.status`). Each key is a target; its value the
 * only sources. A case is born `open` (`openCase`: at most one open case per step, or per run).
 *
 * - open: waiting for a person. Exits to resolved, when an operator acts on it (`resolveCase`, by
 *   compare-and-set through `transitionCase`), recorded with who, when and what they did.
 * - resolved: final. A case that needs a person again is a new case, opened again by the harness.
 */
export const CASE_TRANSITIONS = {
  [ReviewStatus.OPEN]: [],
  [ReviewStatus.RESOLVED]: [ReviewStatus.OPEN],
} as const satisfies Record<ReviewStatus, readonly ReviewStatus[]>;

/** The statuses a case may move to `to` from. */
export function allowedCaseSources(to: ReviewStatus): readonly ReviewStatus[] {
  return CASE_TRANSITIONS[to];
}

export function isLegalCaseTransition(from: ReviewStatus, to: ReviewStatus): boolean {
  return (CASE_TRANSITIONS[to] as readonly ReviewStatus[]).includes(from);
}
