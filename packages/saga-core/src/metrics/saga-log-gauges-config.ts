import { z } from 'zod';

/**
 * The settings of the saga-log gauges, for a role's config schema (`baseConfigSchema.extend({ ...,
 * ...sagaLogGaugesConfig(true) })`). `defaultOn` is the role's default: on for the reconciler, off for the
 * others, so one pool (not every replica of every role) runs the collector's queries.
 */
export const sagaLogGaugesConfig = (defaultOn: boolean) => ({
  /** Export the gauges derived from the saga log (`registerSagaLogGauges`) from this process. */
  SAGA_LOG_GAUGES: z
    .enum(['true', 'false'])
    .default(defaultOn ? 'true' : 'false')
    .transform((v) => v === 'true'),
  /**
   * How long one read of the gauges is reused across scrapes, in ms. 0: once per scrape. Set it near the
   * scrape interval when several scrapers (a Prometheus HA pair) reach the same process.
   */
  SAGA_LOG_GAUGES_CACHE_MS: z.coerce.number().int().min(0).default(0),
});
