import { Redis } from 'ioredis';

/**
 * Deletes every Redis key under a BullMQ prefix (queues, job schedulers, locks), so a demo, a soak or a
 * simulation leaves nothing behind; returns how many keys went. `SCAN`, not `KEYS`: it does not block a
 * Redis other deployments share.
 */
export async function dropQueues(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true, connectTimeout: 5_000 });
  let deleted = 0;
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}
