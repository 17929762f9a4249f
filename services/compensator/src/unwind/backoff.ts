import { equalJitterBackoffMs } from '@agent-saga/core';
import type { CompensatorConfig } from '../config.js';

/**
 * Delay before attempt `attempts + 1` of a compensation: core's one backoff ({@link equalJitterBackoffMs}:
 * exponential, capped, equal jitter) with the compensator's base COMPENSATION_BACKOFF_MS and cap
 * COMPENSATION_BACKOFF_MAX_MS, so that compensations of many runs refused by one outage do not all come
 * back at the same instant.
 */
export function backoffMs(
  config: Pick<CompensatorConfig, 'COMPENSATION_BACKOFF_MS' | 'COMPENSATION_BACKOFF_MAX_MS'>,
  attempts: number,
): number {
  return equalJitterBackoffMs(attempts, config.COMPENSATION_BACKOFF_MS, config.COMPENSATION_BACKOFF_MAX_MS);
}
