import type { Logger } from 'pino';
import { askRealSystem, type AskTarget } from './ask-real-system.js';
import type { AnyTool, ToolEffect } from './define-tool.js';
import type { ClientError } from '../errors/errors.js';
import { isRefusedUnderKey, refusalDetail, refusalOf } from './refused-under-key.js';

/**
 * What one `lookup(key)` saw, with when it was asked and how long it took: the evidence a decision about
 * an unknown outcome rests on, written to the step's LOOKUP events as {@link lookupEvidence}.
 * - `found`: the real system holds an effect under the key (`effect.duplicates`: more than one).
 * - `absent`: it holds none, as far as its search shows now (search indexes lag: see `lookupLagMs`).
 * - `refused`: it holds the call made under the key, ended without its effect for good
 *   (`RefusedUnderKey`); `error` is what the call would have thrown.
 * - `error`: the lookup threw or timed out; nothing was learnt.
 */
export type LookupObservation =
  | { readonly kind: 'found'; readonly at: Date; readonly ms: number; readonly effect: ToolEffect }
  | { readonly kind: 'absent'; readonly at: Date; readonly ms: number }
  | { readonly kind: 'refused'; readonly at: Date; readonly ms: number; readonly error: ClientError }
  | {
      readonly kind: 'error';
      readonly at: Date;
      readonly ms: number;
      readonly error: { readonly name: string; readonly message: string };
    };

/** The step fields a lookup needs. */
export type LookupTarget = AskTarget;

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
  const lookup = tool.lookup;
  if (!lookup)
    return {
      kind: 'error',
      at: new Date(),
      ms: 0,
      error: { name: 'Error', message: `tool ${tool.name} has no lookup` },
    };
  const a = await askRealSystem(tool, step, log, 'lookup', (ctx) => lookup(step.idempotency_key, ctx));
  if (!a.ok) return { kind: 'error', at: a.at, ms: a.ms, error: a.error };
  if (isRefusedUnderKey(a.value)) return { kind: 'refused', at: a.at, ms: a.ms, error: refusalOf(a.value) };
  return a.value
    ? { kind: 'found', at: a.at, ms: a.ms, effect: a.value }
    : { kind: 'absent', at: a.at, ms: a.ms };
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
    case 'refused':
      return { ...base, refused: refusalDetail(o.error) };
    case 'error':
      return { ...base, error: o.error };
    default: {
      const never: never = o;
      throw new Error(`unhandled observation ${JSON.stringify(never)}`);
    }
  }
}
