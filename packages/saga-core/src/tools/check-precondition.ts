import type { Logger } from 'pino';
import type { StepRow } from '../db/schema.js';
import { askRealSystem, type AskTarget } from './ask-real-system.js';
import type { AnyTool } from './define-tool.js';

/** What one precondition check saw, with when and how long: the evidence of the compensator's decision. */
export type PreconditionObservation =
  | { readonly kind: 'none' }
  | {
      readonly kind: 'as_left' | 'already_compensated';
      readonly at: Date;
      readonly ms: number;
    }
  | { readonly kind: 'changed'; readonly at: Date; readonly ms: number; readonly changed: string }
  | {
      readonly kind: 'error';
      readonly at: Date;
      readonly ms: number;
      readonly error: { readonly name: string; readonly message: string };
    };

/** The forward step fields a precondition needs: those of any question to the real system, and its effect. */
export type PreconditionTarget = AskTarget & Pick<StepRow, 'external_ref' | 'result'>;

/**
 * Asks the forward tool's `precondition` about `step`'s effect, bounded by the tool's `timeoutMs` (a check
 * that hangs is an error, never a verdict). `none` when the tool declares no precondition (the compensation
 * is sent as before). Never throws. Runs outside any transaction: it calls the real system.
 */
export async function checkPrecondition(
  tool: AnyTool,
  step: PreconditionTarget,
  log: Logger,
): Promise<PreconditionObservation> {
  const check = tool.precondition;
  if (!check) return { kind: 'none' };
  const a = await askRealSystem(tool, step, log, 'precondition', (ctx) =>
    check({ externalRef: step.external_ref, result: step.result }, ctx),
  );
  if (!a.ok) return { kind: 'error', at: a.at, ms: a.ms, error: a.error };
  const verdict = a.value;
  if (verdict === 'as_left' || verdict === 'already_compensated')
    return { kind: verdict, at: a.at, ms: a.ms };
  return { kind: 'changed', at: a.at, ms: a.ms, changed: verdict.changed };
}

/** The JSON detail of a compensation event for `o`: when, how long, what the target looked like. */
export function preconditionEvidence(o: PreconditionObservation): Record<string, unknown> {
  switch (o.kind) {
    case 'none':
      return { precondition: 'none' };
    case 'as_left':
    case 'already_compensated':
      return { precondition: o.kind, at: o.at.toISOString(), ms: o.ms };
    case 'changed':
      return { precondition: 'changed', at: o.at.toISOString(), ms: o.ms, changed: o.changed };
    case 'error':
      return { precondition: 'error', at: o.at.toISOString(), ms: o.ms, error: o.error };
    default: {
      const never: never = o;
      throw new Error(`unhandled precondition ${JSON.stringify(never)}`);
    }
  }
}
