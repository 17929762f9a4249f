import type { Queue } from './bullmq.js';

/** The raw Redis client under a queue (BullMQ 6 keeps it on the queue's Redis backend). */
function redisOf(queue: Queue) {
  return queue.getBackend().connection.client;
}

/** The Redis server's version, read through a queue's connection. */
export async function redisVersion(queue: Queue): Promise<string> {
  const info = await (await redisOf(queue)).info();
  return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
}

/**
 * Deletes every key under `prefix:` (the saga queue's and the baseline's), so a run leaves nothing behind
 * in the shared Redis. SCAN, not KEYS: it does not block the server for other users.
 */
export async function deleteKeysWithPrefix(queue: Queue, prefix: string): Promise<number> {
  const redis = await redisOf(queue);
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, { MATCH: `${prefix}:*`, COUNT: 1000 });
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}
