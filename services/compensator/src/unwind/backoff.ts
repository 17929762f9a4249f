import type { CompensatorConfig } from '../config.js';

/**
 * Delay before attempt `attempts + 1` of a compensation: exponential from COMPENSATION_BACKOFF_MS, capped at
 * COMPENSATION_BACKOFF_MAX_MS, with "equal jitter" (half fixed, half random) so that compensations of
 * many runs refused by one outage do not all come back at the same instant.
 */
export function backoffMs(
  config: Pick<CompensatorConfig, 'COMPENSATION_BACKOFF_MS' | 'COMPENSATION_BACKOFF_MAX_MS'>,
  attempts: number,
): number {
  const exp = Math.min(
    config.COMPENSATION_BACKOFF_MAX_MS,
    config.COMPENSATION_BACKOFF_MS * 2 ** Math.max(0, attempts - 1),
  );
  return Math.round(exp / 2 + Math.random() * (exp / 2));
}
