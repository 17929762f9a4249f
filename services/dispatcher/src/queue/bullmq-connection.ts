import type { ConnectionOptions } from 'bullmq';

/**
 * BullMQ connection options for a Redis URL. `maxRetriesPerRequest: null` is what BullMQ requires of the
 * blocking connections its workers hold (a worker must wait for Redis, not fail a job, when Redis blips).
 */
export function bullmqConnection(redisUrl: string): ConnectionOptions {
  return { url: redisUrl, maxRetriesPerRequest: null };
}
