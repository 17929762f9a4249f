import type { Logger } from './logger.js';
import { withinMs } from './within-ms.js';

/**
 * Why 5 s: closing a connection to a live Redis or Postgres takes milliseconds; a drain must still end
 * (and the process exit 0) while that dependency is down, where a close may fail or never answer.
 */
export const CLOSE_TIMEOUT_MS = 5_000;

/**
 * Closes one connection during a drain, bounded and never throwing: a BullMQ queue whose Redis is down
 * rejects its QUIT ("Stream isn't writeable"), one that never connected may wait. Either way the process is
 * about to exit and the connection dies with it, so the failure is logged, not allowed to fail the drain.
 */
export async function closeWithin(
  what: string,
  close: () => Promise<unknown>,
  logger: Logger,
  timeoutMs: number = CLOSE_TIMEOUT_MS,
): Promise<void> {
  try {
    await withinMs(close(), timeoutMs, `closing ${what}`);
  } catch (err) {
    logger.warn({ err }, `closing ${what} failed; it ends with the process`);
  }
}
