import { Counter, Histogram, type Registry } from 'prom-client';
import { ATTEMPTS_PER_EFFECT_BUCKETS } from './metric-buckets.js';

/**
 * Metrics that several roles report about the same thing, defined once so their name, help, labels and
 * buckets cannot drift apart: a query sums them across executors, reconcilers and compensators.
 */

/** More than one effect found under one idempotency key: something sent a call twice. Always a page. */
export function duplicateEffectCounter(registry: Registry): Counter<'tool'> {
  return new Counter({
    name: 'saga_duplicate_effect_incidents_total',
    help: 'Calls or lookups that found more than one effect under one idempotency key, by tool',
    labelNames: ['tool'] as const,
    registers: [registry],
  });
}

/** Attempts sent for a forward step by the time its effect was confirmed (retry amplification). */
export function attemptsPerEffectHistogram(registry: Registry): Histogram<'tool'> {
  return new Histogram({
    name: 'saga_attempts_per_effect',
    help: 'Attempts sent for a step by the time its effect was confirmed, by tool (retry amplification)',
    labelNames: ['tool'] as const,
    buckets: [...ATTEMPTS_PER_EFFECT_BUCKETS],
    registers: [registry],
  });
}
