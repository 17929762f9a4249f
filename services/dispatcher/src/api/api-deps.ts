import type { Queue } from 'bullmq';
import type {
  ExecuteJob,
  Logger,
  SagaDb,
  SagaRegistry,
  ToolModuleLookups,
  ToolRegistry,
} from '@agent-saga/core';
import type { DispatcherConfig } from '../config.js';
import type { InlineExecutor } from '../executor/inline-executor.js';

/** What the API is built from, passed explicitly (no module state, nothing read from the environment). */
export interface ApiDeps {
  readonly db: SagaDb;
  /**
   * The pool the grouped intakes and delivered marks go through (`RoleContext.groupDb`: plans made once per
   * connection); absent: `db`.
   */
  readonly groupDb?: SagaDb;
  /** The Postgres schema of the saga log (names the NOTIFY channels). */
  readonly schema: string;
  readonly registry: ToolRegistry;
  /** The tool module's saga definitions (`loadToolModule`), listed by `GET /v1/definitions`; none if absent. */
  readonly definitions?: SagaRegistry;
  /** The tool module's `lookups`: the reads a bound run's invariant is checked with before it completes. */
  readonly lookups?: ToolModuleLookups;
  /** The execute queue, for the fast path and the readiness check. */
  readonly queue: Queue<ExecuteJob>;
  readonly config: Readonly<DispatcherConfig>;
  /**
   * With SAGA_EXECUTE_INLINE, the API's own executor: a step this process commits runs here first, and goes
   * to the queue only when it is full (see `inline-executor.ts`).
   */
  readonly inline?: InlineExecutor;
  readonly logger: Logger;
}
