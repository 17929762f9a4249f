import {
  callTool,
  CrashPoint,
  startTraceSpan,
  storedTrace,
  type AnyTool,
  type CompensationRow,
  type ToolCallResult,
} from '@agent-saga/core';
import type { CommandBuilt } from './build-command.js';
import { unhandled, type CompensationPass, type Ended } from './compensation-pass.js';
import type { UnwindDeps } from './unwind-deps.js';
import { forwardTrace } from './forward-trace.js';

/**
 * What an attempt came to: sent under the intent `claimed` (its outcome still to record), or not sent
 * because another compensator moved the row first (`claim-lost`: nothing to write).
 */
export type Attempted =
  | {
      readonly kind: 'called';
      readonly claimed: CompensationRow;
      readonly tool: AnyTool;
      readonly call: ToolCallResult;
    }
  | { readonly kind: 'claim-lost' }
  | Ended;

/**
 * Stage 5 of `runCompensation`, the attempt:
 *
 * 1. The intent, before the call: → running by compare-and-set on the status and count this pass read,
 *    with the attempt counted and a lease on the database's clock (the tool's timeout plus
 *    COMPENSATOR_LEASE_MARGIN_MS, judged by `now()` in drive-run), committed with the lookup events of
 *    stage 1, grouped with other runs' claims (`claimAttemptBatch`).
 * 2. The call, with the compensation's own key and the tool's timeout. A crash after it and before the
 *    record (`COMPENSATION_AFTER_TOOL_BEFORE_RECORD`) leaves the attempt running until its lease runs
 *    out; then it is unknown and looked up by key, never sent blindly again.
 */
export async function attemptCompensation(
  d: UnwindDeps,
  pass: CompensationPass,
  prev: CommandBuilt,
): Promise<Attempted> {
  switch (prev.kind) {
    case 'ended':
      return prev;
    case 'command': {
      const { comp, unwindReason, log } = pass;
      const claimed = await d.groups.claim.submit({
        runId: comp.run_id,
        stepIdx: comp.step_idx,
        seenStatus: comp.status,
        seenAttempts: comp.attempts,
        leaseMs: prev.tool.timeoutMs + d.config.COMPENSATOR_LEASE_MARGIN_MS,
        detail: { attempt: comp.attempts + 1, worker: d.workerId, args: prev.args, unwindReason },
        evidence: prev.lookups,
      });
      if (!claimed) return { kind: 'claim-lost' };
      // The compensation's call is a span of the forward step's trace; the tool sends its traceparent.
      const span = startTraceSpan(
        `saga.compensate ${prev.tool.name}`,
        storedTrace(forwardTrace(pass)),
        'client',
        {
          'saga.run_id': comp.run_id,
          'saga.step_idx': comp.step_idx,
          'saga.tool': prev.tool.name,
        },
      );
      const call = await callTool(
        prev.tool,
        prev.args,
        {
          idempotencyKey: prev.key,
          runId: comp.run_id,
          stepIdx: comp.step_idx,
          tenantId: comp.tenant_id,
          attempt: claimed.attempts,
          logger: log,
          traceparent: span.traceparent,
          ...(unwindReason !== null ? { unwindReason } : {}),
        },
        d.shutdownSignal,
      );
      span.end(call.ok ? undefined : call.error);
      d.crash(CrashPoint.COMPENSATION_AFTER_TOOL_BEFORE_RECORD);
      d.metrics?.latency.observe({ tool: prev.tool.name, ok: String(call.ok) }, call.durationMs / 1000);
      return { kind: 'called', claimed, tool: prev.tool, call };
    }
    default:
      return unhandled(prev, 'stage result');
  }
}
