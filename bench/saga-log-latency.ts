import { sql } from 'kysely';
import { StepEventKind, StepStatus, type SagaDb } from '@agent-saga/core';
import { summarize, type LatencySummary } from './latency-summary.js';

/**
 * Where a call's time went, by the saga log's own clock. `step_events.at` is `clock_timestamp()` at the
 * insert of each event, and each event is written a statement or two before its transaction commits, so
 * differences between them are commit-to-commit times to within a round trip:
 * - `intentToConfirmed`: the intake's INTENDED event → the executor's CONFIRMED event (the target figure);
 * - `intentToClaim`: → the executor's ATTEMPT event (outbox/fast-path publish, BullMQ, claim);
 * - `claimToConfirmed`: ATTEMPT → CONFIRMED (claim commit, the no-op tool, the outcome write).
 */
export interface SagaLogLatency {
  readonly intentToConfirmed: LatencySummary;
  readonly intentToClaim: LatencySummary;
  readonly claimToConfirmed: LatencySummary;
}

/** Reads the three intervals of every step whose key is in `keys`. */
export async function sagaLogLatency(db: SagaDb, keys: readonly string[]): Promise<SagaLogLatency> {
  const rows = await sql<{ claim_ms: number | null; confirm_ms: number }>`
    SELECT extract(epoch FROM c.at - i.at) * 1000 AS confirm_ms,
           extract(epoch FROM a.at - i.at) * 1000 AS claim_ms
      FROM saga_log s
      JOIN step_events i ON i.run_id = s.run_id AND i.step_idx = s.step_idx
                        AND i.kind = ${StepEventKind.TRANSITION} AND i.from_status IS NULL
                        AND i.to_status = ${StepStatus.INTENDED}
      JOIN step_events c ON c.run_id = s.run_id AND c.step_idx = s.step_idx
                        AND c.kind = ${StepEventKind.TRANSITION} AND c.to_status = ${StepStatus.CONFIRMED}
      LEFT JOIN step_events a ON a.run_id = s.run_id AND a.step_idx = s.step_idx
                             AND a.kind = ${StepEventKind.ATTEMPT}
     WHERE s.idempotency_key = ANY(${[...keys]}::text[])`.execute(db);
  const confirm = rows.rows.map((r) => Number(r.confirm_ms));
  const claim = rows.rows.filter((r) => r.claim_ms !== null).map((r) => Number(r.claim_ms));
  const claimToConfirm = rows.rows
    .filter((r) => r.claim_ms !== null)
    .map((r) => Number(r.confirm_ms) - Number(r.claim_ms));
  return {
    intentToConfirmed: summarize(confirm),
    intentToClaim: summarize(claim),
    claimToConfirmed: summarize(claimToConfirm),
  };
}
