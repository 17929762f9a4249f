import { WaitTimeoutError } from '../errors/errors.js';

/**
 * Resolves or rejects as `work` does, or rejects with {@link WaitTimeoutError} once `ms` have passed,
 * whichever comes first: the bound on a wait for a dependency whose client has none of its own (a BullMQ
 * queue still waiting for its first connection queues every command until Redis comes). `work` itself is
 * not cancelled; a late rejection of it is swallowed, since its caller has moved on.
 */
export async function withinMs<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => {});
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new WaitTimeoutError(what, ms)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
