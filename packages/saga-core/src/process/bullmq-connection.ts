/**
 * BullMQ connection options for a Redis URL, for every role's queues and workers. `maxRetriesPerRequest:
 * null` is what BullMQ requires of the blocking connections its workers hold: a worker must wait for Redis
 * through a blip, not fail a job. A plain object (BullMQ's `ConnectionOptions` accepts it), so core needs
 * no BullMQ dependency.
 */
export function bullmqConnection(redisUrl: string): {
  readonly url: string;
  readonly maxRetriesPerRequest: null;
} {
  return { url: redisUrl, maxRetriesPerRequest: null };
}
