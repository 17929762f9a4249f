/**
 * Histogram buckets shared by every role that observes the same quantity, so a query can aggregate the
 * roles' `_bucket` series by `le` (executors and reconcilers both confirm effects).
 *
 * Attempts per effect: 1 is the healthy case; past 10 a step is a bug to find, not a distribution to study.
 */
export const ATTEMPTS_PER_EFFECT_BUCKETS: readonly number[] = Object.freeze([1, 2, 3, 4, 5, 6, 8, 10]);
