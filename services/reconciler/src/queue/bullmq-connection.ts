import type { ConnectionOptions } from 'bullmq';

/**
 * BullMQ connection options for a Redis URL. `maxRetriesPerRequest: null` is what BullMQ requires of a
 * worker's blocking connection (wait for Redis through a blip instead of failing). As the dispatcher's.
 */
export function bullmqConnection(redisUrl: string): ConnectionOptions {
  return { url: redisUrl, maxRetriesPerRequest: null };
}
