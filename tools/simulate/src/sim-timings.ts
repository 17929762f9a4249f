/**
 * The clients' timeouts and the vendors' search lag of a simulation, in one place: the agent-saga roles
 * get them as environment, the naive harness applies the same ones to the same connectors, and the fault
 * modes size their delays from them. Short, so a late commit takes seconds, not the production 20–30 s.
 */

/** Why 1.5 s: Stripe's per-request timeout (`STRIPE_TIMEOUT_MS`); a charge makes two requests. */
export const STRIPE_TIMEOUT_MS = 1_500;
/**
 * Why 3 s: every tool's timeout is capped here (`TEST_TOOL_TIMEOUT_MS`, read by the short-timeout tool
 * module of the cross-service tests); the sandbox answers in milliseconds, so 3 s only ends held calls.
 */
export const TOOL_TIMEOUT_MS = 3_000;
/** Why 800 ms: the cross-service tests' lag; a lookup right after a write misses it even on two busy cores. */
export const SEARCH_LAG_MS = 800;

/**
 * Why 500 ms: a late commit lands this long past the client's timeout at the least (the fixed mode), so the
 * client has surely given up when the vendor commits.
 */
export const LATE_BY_MS = 500;
/**
 * Why 12 s: the longest any late commit of the simulation is held (the heavy tail's cap); the tail must
 * stay inside an episode's deadline, the preprint's hour-long tail is out of reach.
 */
export const LATE_COMMIT_MAX_MS = 12_000;
/**
 * The Jira tools' declared commit horizon (`JIRA_COMMIT_HORIZON_MS`): the contract the simulation relies
 * on. A vendor without idempotency must declare how long after a request is sent it may still commit it;
 * agent-saga believes a "not found" only past that and the search lag. Why 14 s: above the longest hold
 * ({@link LATE_COMMIT_MAX_MS}, counted by the sandbox from when the request arrives), plus 2 s for the
 * time between the executor recording the attempt (`last_attempt_at`, where the horizon starts) and the
 * request reaching the sandbox on two busy cores. The keyed vendors keep the default (their timeout): a
 * re-send carries the step's key and is deduped.
 */
export const JIRA_COMMIT_HORIZON_MS = LATE_COMMIT_MAX_MS + 2_000;
/**
 * Why 16 s: the compensator sends an unknown step to a person only after this, and not before a "not
 * found" of a Jira create can be believed ({@link JIRA_COMMIT_HORIZON_MS} plus the lag), else an unwind
 * that meets a held create would ask a person what waiting would have proven.
 */
export const COMPENSATOR_UNKNOWN_MIN_WAIT_MS = JIRA_COMMIT_HORIZON_MS + 2_000;

/** How long a client waits for one request to `vendor` before it gives up (the late-commit threshold). */
export function clientTimeoutMs(vendor: string): number {
  return vendor === 'stripe' ? STRIPE_TIMEOUT_MS : TOOL_TIMEOUT_MS;
}
