/**
 * BullMQ connection options for a Redis URL. Plain objects (BullMQ's `ConnectionOptions` accepts them), so
 * core needs no BullMQ dependency. Two kinds, because the two ends of a queue want opposite things from a
 * Redis that went away:
 *
 * - a **worker** (executor, reconciler, compensator) holds blocking connections and must wait through an
 *   outage, then carry on: `maxRetriesPerRequest: null` (what BullMQ requires of them), commands queued
 *   while reconnecting, no command timeout (a blocking BZPOPMIN waits by design);
 * - a **producer** (the API's fast path and readiness check, the relay, the reconciler's and compensator's
 *   queue adds) must fail fast so its caller can fall back (the outbox keeps the row; a sweep runs again):
 *   no offline queue (a command while disconnected rejects at once instead of waiting for the reconnect),
 *   a command timeout, and one retry per command.
 *
 * Neither gives up reconnecting: ioredis keeps trying (BullMQ's retry strategy, at most 20 s apart).
 */

/**
 * Why 2 s: Redis answers a queue add in well under a millisecond, and in a few ms while it forks for a
 * snapshot or an AOF rewrite; a command unanswered after 2 s is a Redis that is gone or stuck.
 */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 2_000;

/** Options of a worker's connections: wait for Redis through an outage. */
export function bullmqWorkerConnection(redisUrl: string): {
  readonly url: string;
  readonly maxRetriesPerRequest: null;
} {
  return { url: redisUrl, maxRetriesPerRequest: null };
}

/** Options of a producer's connection (a `Queue`): fail fast while Redis is unreachable. */
export function bullmqProducerConnection(
  redisUrl: string,
  opts: { readonly commandTimeoutMs?: number } = {},
): {
  readonly url: string;
  readonly enableOfflineQueue: false;
  readonly commandTimeout: number;
  readonly maxRetriesPerRequest: number;
} {
  return {
    url: redisUrl,
    enableOfflineQueue: false,
    commandTimeout: opts.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    // Why 1: a command cut by a dropped connection is retried once on the next one; more would stretch the
    // caller's wait past its bound for nothing.
    maxRetriesPerRequest: 1,
  };
}

/**
 * The options of a worker under their older name (a connection that waits for Redis). Roles choose
 * {@link bullmqWorkerConnection} or {@link bullmqProducerConnection}; tests that need a waiting connection
 * keep using this.
 */
export const bullmqConnection = bullmqWorkerConnection;
