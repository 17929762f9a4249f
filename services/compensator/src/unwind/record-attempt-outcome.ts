import {
  classifyToolError,
  CompensationStatus,
  errorForLog,
  StepStatus,
  type AnyTool,
  type CompensationRow,
  type Logger,
  type ToolCallResult,
} from '@agent-saga/core';
import type { CompensatorConfig } from '../config.js';
import { CompensationOutcome } from '../metrics/compensator-metrics.js';
import type { AttemptOutcomeRecord } from '../sql/record-attempt-outcome-batch.js';
import { backoffMs } from './backoff.js';
import { MOVED_MEANWHILE, unhandled } from './compensation-pass.js';
import { countOutcome, observeConfirmed } from './count-compensation.js';
import type { UnwindDeps } from './unwind-deps.js';

/**
 * What one sent attempt came to, and the record that says so:
 *
 * - `compensated`: the tool returned;
 * - `refused`: the system said no: retried with the same key after a backoff with jitter, or, once
 *   COMPENSATION_MAX_ATTEMPTS are spent (`exhausted`), failed for good (a person decides);
 * - `unknown`: anything else: looked up by key next time, not before the tool's lookup lag.
 */
export type JudgedAttempt =
  | { readonly kind: 'compensated'; readonly record: AttemptOutcomeRecord; readonly duplicates: boolean }
  | { readonly kind: 'refused'; readonly record: AttemptOutcomeRecord; readonly exhausted: boolean }
  | { readonly kind: 'unknown'; readonly record: AttemptOutcomeRecord };

/** Judges the call of the attempt `claimed` (decides only; writes nothing). */
export function judgeAttempt(
  config: Pick<
    CompensatorConfig,
    'COMPENSATION_MAX_ATTEMPTS' | 'COMPENSATION_BACKOFF_MS' | 'COMPENSATION_BACKOFF_MAX_MS'
  >,
  claimed: CompensationRow,
  tool: AnyTool,
  call: ToolCallResult,
): JudgedAttempt {
  const at = { runId: claimed.run_id, stepIdx: claimed.step_idx } as const;
  if (call.ok)
    return {
      kind: 'compensated',
      record: {
        ...at,
        outcome: {
          to: CompensationStatus.COMPENSATED,
          externalRef: call.effect.externalRef,
          result: call.effect.result ?? null,
        },
        cause: 'compensator: tool returned',
        detail: { durationMs: Math.round(call.durationMs), externalRef: call.effect.externalRef },
      },
      duplicates: (call.effect.duplicates?.length ?? 0) > 0,
    };
  const outcome = classifyToolError(call.error, call.reason);
  const detail = { ...outcome.error, durationMs: Math.round(call.durationMs) };
  if (outcome.status === StepStatus.FAILED) {
    const exhausted = claimed.attempts >= config.COMPENSATION_MAX_ATTEMPTS;
    return {
      kind: 'refused',
      exhausted,
      record: {
        ...at,
        outcome: {
          to: CompensationStatus.FAILED,
          error: outcome.error,
          retryInMs: exhausted ? null : backoffMs(config, claimed.attempts),
          reason: exhausted ? `refused ${claimed.attempts} times: ${outcome.error.message}` : null,
        },
        cause: exhausted
          ? 'compensator: refused; attempt budget exhausted'
          : 'compensator: refused; will retry',
        detail,
      },
    };
  }
  return {
    kind: 'unknown',
    record: {
      ...at,
      outcome: {
        to: CompensationStatus.UNKNOWN,
        error: outcome.error,
        retryInMs: Math.max(tool.lookupLagMs, backoffMs(config, claimed.attempts)),
      },
      cause: 'compensator: outcome unknown; will look it up by key',
      detail,
    },
  };
}

/**
 * Records what the attempt `claimed` came to (`judgeAttempt`), under its lease, grouped with other runs'
 * outcomes (`recordAttemptOutcomeBatch`), and counts it. A lease lost meanwhile (it ran out and another
 * compensator expired it) writes nothing and is logged.
 */
export async function recordAttemptOutcome(
  d: UnwindDeps,
  claimed: CompensationRow,
  tool: AnyTool,
  call: ToolCallResult,
  log: Logger,
): Promise<void> {
  const judged = judgeAttempt(d.config, claimed, tool, call);
  if (!call.ok)
    log.warn(
      {
        err: errorForLog(call.error, tool, claimed.args),
        outcome: judged.record.outcome.to,
        attempt: claimed.attempts,
      },
      'compensation attempt did not confirm',
    );
  const moved = await d.groups.outcome.submit(judged.record);
  if (!moved) log.info({ to: judged.record.outcome.to }, MOVED_MEANWHILE);
  switch (judged.kind) {
    case 'compensated':
      if (judged.duplicates) d.metrics?.duplicateEffects.inc({ tool: tool.name });
      if (moved) {
        countOutcome(d, tool.name, CompensationOutcome.COMPENSATED, false);
        observeConfirmed(d, tool.name, moved);
      }
      log.info({ tool: tool.name, attempt: claimed.attempts }, 'compensated');
      return;
    case 'refused':
      if (moved)
        countOutcome(
          d,
          tool.name,
          judged.exhausted ? CompensationOutcome.GAVE_UP : CompensationOutcome.REFUSED,
          judged.exhausted,
        );
      return;
    case 'unknown':
      if (moved) countOutcome(d, tool.name, CompensationOutcome.UNKNOWN, false);
      return;
    default:
      return unhandled(judged, 'attempt');
  }
}
