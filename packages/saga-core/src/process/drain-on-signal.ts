import type { Logger } from './logger.js';

/**
 * SIGTERM and SIGINT drain the process once: `drain` runs (stop taking work, finish what is running, close
 * pools) and the process exits 0, or 1 if draining failed. A second signal during the drain calls
 * `hurry` (abort what is still running so it records UNKNOWN) instead of killing the process half-written.
 */
export function drainOnSignal(opts: {
  readonly logger: Logger;
  readonly drain: () => Promise<void>;
  readonly hurry?: () => void;
}): void {
  let draining = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (draining) {
      opts.logger.warn({ signal }, 'second signal: aborting running work');
      opts.hurry?.();
      return;
    }
    draining = true;
    opts.logger.info({ signal }, 'draining');
    opts.drain().then(
      () => {
        opts.logger.info('drained');
        process.exit(0);
      },
      (err: unknown) => {
        opts.logger.error({ err }, 'drain failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/** Logs a start-up failure (a bad config, an unknown schema version) by its message and exits 1. */
export function exitOnStartFailure(logger: Logger | undefined, err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  if (logger) logger.fatal({ err }, `failed to start: ${message}`);
  else process.stderr.write(`failed to start: ${message}\n`);
  process.exit(1);
}
