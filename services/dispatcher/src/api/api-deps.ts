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

/** What the API is built from, passed explicitly (no module state, nothing read from the environment). */
export interface ApiDeps {
  readonly db: SagaDb;
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
  readonly logger: Logger;
}
