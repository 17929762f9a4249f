import type { Logger } from 'pino';
import type { StepRow } from '../db/schema.js';
import type { AnyTool, LookupContext, ToolEffect } from './define-tool.js';

/**
 * What one `lookup(key)` saw, with when it was asked and how long it took: the evidence a decision about
 * an unknown outcome rests on, written to the step's LOOKUP events as {@link lookupEvidence}.
 * - `found`: the real system holds an effect under the key (`effect.duplicates`: more than one).
 * - `absent`: it holds none, as far as its search shows now (search indexes lag: see `lookupLagMs`).
 * - `error`: the lookup threw or timed out; nothing was learnt.
 */
export type LookupObservation =
  | { readonly kind: 'found'; readonly at: Date; readonly ms: number; readonly effect: ToolEffect }
  | { readonly kind: 'absent'; readonly at: Date; readonly ms: number }
  | {
      readonly kind: 'error';
      readonly at: Date;
      readonly ms: number;
      readonly error: { readonly name: string; readonly message: string };
    };

/** The step fields a lookup needs. */
export type LookupTarget = Pick<StepRow, 'idempotency_key' | 'run_id' | 'step_idx' | 'tenant_id' | 'args'>;

/**
 * Asks `tool.lookup` for the effect made under the step's key, bounded by the tool's `timeoutMs` (a lookup
 * that hangs is an error, never a "not found"). Never throws: a failure is an `error` observation.
 * Runs outside any transaction: it calls the real system.
 */
export async function lookupByKey(
  tool: AnyTool,
  step: LookupTarget,
  log: Logger,
): Promise<LookupObservation> {
  const at = new Date();
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const lookup = tool.lookup;
  if (!lookup)
    return { kind: 'error', at, ms: 0, error: { name: 'Error', message: `tool ${tool.name} has no lookup` } };
  const signal = AbortSignal.timeout(tool.timeoutMs);
  const ctx: LookupContext = {
    idempotencyKey: step.idempotency_key,
    runId: step.run_id,
    stepIdx: step.step_idx,
    tenantId: step.tenant_id,
    args: step.args,
    signal,
    logger: log,
  };
  try {
    const effect = await Promise.race([
      lookup(step.idempotency_key, ctx),
      rejectOnAbort(signal, tool.timeoutMs),
    ]);
    return effect ? { kind: 'found', at, ms: ms(), effect } : { kind: 'absent', at, ms: ms() };
  } catch (err) {
    log.warn({ err }, 'lookup failed');
    const e = err instanceof Error ? err : new Error(String(err));
    return { kind: 'error', at, ms: ms(), error: { name: e.name, message: e.message } };
  }
}

/** The JSON detail of a LOOKUP event for `o`: when, how long, what it saw. */
export function lookupEvidence(o: LookupObservation): Record<string, unknown> {
  const base = { at: o.at.toISOString(), ms: o.ms, seen: o.kind };
  switch (o.kind) {
    case 'found':
      return {
        ...base,
        externalRef: o.effect.externalRef,
        ...(o.effect.duplicates?.length ? { duplicates: o.effect.duplicates } : {}),
      };
    case 'absent':
      return base;
    case 'error':
      return { ...base, error: o.error };
    default: {
      const never: never = o;
      throw new Error(`unhandled observation ${JSON.stringify(never)}`);
    }
  }
}

function rejectOnAbort(signal: AbortSignal, timeoutMs: number): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(new Error(`lookup timed out after ${timeoutMs} ms`));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}
