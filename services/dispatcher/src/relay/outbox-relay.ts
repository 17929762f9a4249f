import type { Queue } from 'bullmq';
import {
  listenChannel,
  outboxChannel,
  type ChannelListener,
  type CrashPoint,
  type DbOptions,
  type ExecuteJob,
  type Logger,
  type SagaDb,
} from '@agent-saga/core';
import type { DispatcherConfig } from '../config.js';
import type { WorkerMetrics } from '../metrics/worker-metrics.js';
import { publishOutboxBatch } from './publish-outbox-batch.js';

export interface OutboxRelay {
  start(): Promise<void>;
  /**
   * Stops claiming: no new batch starts; the batch under way finishes (publishes and marks, or gives its
   * rows back), within its bounded publish.
   */
  stop(): Promise<void>;
  /** Sweeps now. Resolves when the sweep under way (or the one this call started) ends. */
  sweep(): Promise<void>;
}

export interface OutboxRelayDeps {
  readonly db: SagaDb;
  readonly queue: Queue<ExecuteJob>;
  readonly config: Pick<
    DispatcherConfig,
    | 'SAGA_DB_SCHEMA'
    | 'RELAY_BATCH_SIZE'
    | 'RELAY_POLL_MS'
    | 'RELAY_DEBOUNCE_MS'
    | 'RELAY_GRACE_MS'
    | 'SAGA_FAST_PATH'
    | 'RELAY_CLAIM_LEASE_MS'
    | 'REDIS_COMMAND_TIMEOUT_MS'
  >;
  /** Connection of the relay's dedicated LISTEN session. */
  readonly listenDb: DbOptions;
  readonly crash: (point: CrashPoint) => void;
  readonly logger: Logger;
  readonly metrics?: WorkerMetrics;
}

/**
 * The outbox relay: moves committed outbox rows into BullMQ. It sweeps when woken by a NOTIFY on
 * {@link outboxChannel} (debounced by RELAY_DEBOUNCE_MS, so a burst of intents is one batch), and every
 * RELAY_POLL_MS as a fallback for a lost NOTIFY or a LISTEN connection being reopened. A row is the relays'
 * from its `relay_after`: at once for rows nobody else publishes (a released commit step, a re-dispatch),
 * RELAY_GRACE_MS later for the rows the API publishes itself on its fast path. Those intake commits send no
 * NOTIFY at all (a notifying commit serialises with every other one on PG 15); the poll (RELAY_POLL_MS, 1 s
 * by default, below the 2 s grace) finds any the API failed to publish. One sweep runs at a time per relay;
 * it takes batches until one comes back short. Several relays may run: each batch is claimed for
 * RELAY_CLAIM_LEASE_MS in one committed statement (see `publishOutboxBatch`), so no transaction is open
 * while a relay waits for Redis, and a SIGTERM drain ends within the batch's bounded publish even while
 * Redis is down.
 */
export function createOutboxRelay(d: OutboxRelayDeps): OutboxRelay {
  let stopping = false;
  let running: Promise<void> | undefined;
  let again = false;
  let wakeTimer: NodeJS.Timeout | undefined;
  let wakeAt = Infinity;
  let pollTimer: NodeJS.Timeout | undefined;

  let listener: ChannelListener | undefined;

  /** Schedules a sweep in `delayMs`, unless one is already due sooner. */
  function wake(delayMs: number): void {
    if (stopping) return;
    const at = Date.now() + delayMs;
    if (wakeTimer && wakeAt <= at) return;
    clearTimeout(wakeTimer);
    wakeAt = at;
    wakeTimer = setTimeout(() => {
      wakeTimer = undefined;
      wakeAt = Infinity;
      void sweep();
    }, delayMs);
  }

  function sweep(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = drain().finally(() => {
      running = undefined;
      if (again && !stopping) {
        again = false;
        void sweep();
      }
    });
    return running;
  }

  async function drain(): Promise<void> {
    try {
      for (;;) {
        if (stopping) return;
        const r = await publishOutboxBatch(d.db, d.queue, {
          limit: d.config.RELAY_BATCH_SIZE,
          leaseMs: d.config.RELAY_CLAIM_LEASE_MS,
          // A command and its one retry on a new connection (see `bullmqProducerConnection`).
          publishTimeoutMs: 2 * d.config.REDIS_COMMAND_TIMEOUT_MS,
          crash: d.crash,
          logger: d.logger,
        });
        d.metrics?.relayPublished.inc(r.published);
        d.metrics?.outboxLag.set(r.oldestAgeMs / 1000);
        if (r.published > 0) d.logger.debug({ published: r.published }, 'outbox batch published');
        if (!r.full) return;
      }
    } catch (err) {
      // Postgres unavailable: the poll tries again; nothing was marked that was not sent, and a claim that
      // could not be given back ends with its lease.
      d.logger.error({ err }, 'outbox sweep failed');
    }
  }

  return {
    async start() {
      listener = await listenChannel({
        db: d.listenDb,
        channel: outboxChannel(d.config.SAGA_DB_SCHEMA),
        // Only writers that leave publishing to the relays notify: their rows are due at once.
        onNotify: () => wake(d.config.RELAY_DEBOUNCE_MS),
        onError: (err) => d.logger.warn({ err }, 'outbox LISTEN session lost; polling meanwhile'),
        onReconnect: () => wake(0),
      });
      pollTimer = setInterval(() => wake(0), d.config.RELAY_POLL_MS);
      wake(0);
    },
    async stop() {
      stopping = true;
      clearTimeout(wakeTimer);
      clearInterval(pollTimer);
      await listener?.stop();
      await running;
    },
    sweep,
  };
}
