/**
 * A token bucket per key, in process memory: each key may spend `perMinute` requests at once and gets them
 * back evenly over a minute (one every `60_000 / perMinute` ms). Chosen over a fixed window because a
 * window lets twice the rate through across its boundary, and a bucket's "when may I try again" is exact.
 *
 * Bounded: at most `maxKeys` buckets. A bucket untouched long enough to be full again is the same as no
 * bucket, so the least recently used one is dropped first (a Map keeps insertion order; a touched key is
 * re-inserted). Dropping a bucket that is not yet full only forgives that key; it never refuses anyone.
 *
 * Per process: with several API processes a token may send `perMinute` to each. The limit bounds what
 * one token can make one process do, which is what it is for (memory, connections, the database pool).
 */
export interface TokenBuckets {
  /** Spends one request of `key`: 0 when allowed, else the ms until one more is allowed. */
  take(key: string, now?: number): number;
  readonly size: number;
}

/** Why 10,000: far more tokens than one deployment issues, and a few hundred KiB of memory at most. */
export const DEFAULT_MAX_KEYS = 10_000;

export function createTokenBuckets(perMinute: number, maxKeys = DEFAULT_MAX_KEYS): TokenBuckets {
  if (!Number.isInteger(perMinute) || perMinute < 1)
    throw new RangeError(`perMinute: a positive integer, got ${perMinute}`);
  const refillMs = 60_000 / perMinute;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(key, now = Date.now()) {
      const b = buckets.get(key);
      const tokens = b ? Math.min(perMinute, b.tokens + (now - b.at) / refillMs) : perMinute;
      if (b) buckets.delete(key);
      else if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value!);
      if (tokens < 1) {
        buckets.set(key, { tokens, at: now });
        return Math.ceil((1 - tokens) * refillMs);
      }
      buckets.set(key, { tokens: tokens - 1, at: now });
      return 0;
    },
    get size() {
      return buckets.size;
    },
  };
}
