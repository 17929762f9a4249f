import type { Queue } from 'bullmq';
import { Counter, Gauge, type Registry } from 'prom-client';
import { sharedRead, type ExecuteJob, type Logger } from '@agent-saga/core';

/**
 * The autoscaling signal of the executor pool, read from the BullMQ execute queue on each scrape:
 *
 * - `saga_execute_jobs_waiting`: jobs no executor has taken yet (BullMQ's `wait` list plus `prioritized`,
 *   both ready to run now). More executors take these sooner: this is what KEDA scales the executors on.
 * - `saga_execute_jobs_active`: jobs executors hold right now. KEDA scales on waiting + active over a
 *   per-pod target below EXECUTOR_CONCURRENCY: waiting alone is 0 whenever the pool keeps up, and scaling
 *   on it would shrink a busy pool until a backlog builds again.
 * - `saga_execute_jobs_delayed`: jobs waiting for a time (a claim retried after a failed claim: Postgres
 *   was unreachable). Reported apart because more executors would not help them: they are due later.
 *
 * Decision: the relay owns these, not the executor. The relay always runs (it is the queue's producer), so
 * the signal exists while the executors are scaled to zero, which scaling from zero needs; and a pool of
 * relays is small and fixed, where executors come and go with the very number they would report (read the
 * series with `max`, as every relay reports the same queue). The executor's own listener stays as it was.
 *
 * Cost: one `getJobCounts` (LLENs and ZCARDs, O(1) each) per scrape, shared by the three gauges (`sharedRead`:
 * prom-client collects every gauge of a scrape at once). A failed read (Redis down) keeps the last values
 * and counts `saga_execute_queue_read_errors_total`; `/metrics` still answers.
 */
export function registerExecuteQueueGauges(
  registry: Registry,
  queue: Queue<ExecuteJob>,
  logger?: Logger,
): void {
  const errors = new Counter({
    name: 'saga_execute_queue_read_errors_total',
    help: 'Scrapes whose read of the execute queue counts failed (the queue gauges kept their last values)',
    registers: [registry],
  });
  const read = sharedRead(() => queue.getJobCounts('wait', 'prioritized', 'active', 'delayed'), 0, {
    onDuration: () => undefined,
    onError: (err) => {
      errors.inc();
      logger?.debug({ err }, 'execute queue counts not read (Redis unreachable?)');
    },
  });
  new Gauge({
    name: 'saga_execute_jobs_waiting',
    help: 'Execute jobs ready to run that no executor has taken yet (BullMQ wait + prioritized)',
    registers: [registry],
    async collect() {
      const c = await read();
      if (c) this.set((c.wait ?? 0) + (c.prioritized ?? 0));
    },
  });
  new Gauge({
    name: 'saga_execute_jobs_active',
    help: 'Execute jobs an executor holds right now (BullMQ active)',
    registers: [registry],
    async collect() {
      const c = await read();
      if (c) this.set(c.active ?? 0);
    },
  });
  new Gauge({
    name: 'saga_execute_jobs_delayed',
    help: 'Execute jobs due later (claims retried after a failure); more executors would not take them sooner',
    registers: [registry],
    async collect() {
      const c = await read();
      if (c) this.set(c.delayed ?? 0);
    },
  });
}
