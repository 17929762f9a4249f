import { InvalidArgsError, parseArgs, resolveRefs } from '@agent-saga/core';
import type { TargetChecked } from './check-target.js';
import { externalRefOf, UnresolvedRefError } from './resolve-command-refs.js';
import {
  ended,
  giveUp,
  unhandled,
  type CompensationPass,
  type Ended,
  type GoingOn,
} from './compensation-pass.js';

/** The command to send: the stored arguments, made concrete and parsed by the tool's schema. */
export type CommandBuilt =
  ({ readonly kind: 'command'; readonly args: Record<string, unknown> } & GoingOn) | Ended;

/**
 * Stage 4 of `runCompensation`: the stored command, its `ref(key)` placeholders resolved to the external
 * refs of the run's CONFIRMED steps, parsed by the compensation tool's schema. A command that cannot be
 * made (a ref that names no confirmed step, arguments the tool refuses) fails for good: the pass gives up.
 */
export function buildCommand(pass: CompensationPass, prev: TargetChecked): CommandBuilt {
  switch (prev.kind) {
    case 'ended':
      return prev;
    case 'target-as-left':
      try {
        const resolved = resolveRefs(pass.comp.args ?? {}, (key) => externalRefOf(pass.steps, key));
        return { ...prev, kind: 'command', args: parseArgs(prev.tool, resolved) };
      } catch (err) {
        if (err instanceof InvalidArgsError || err instanceof UnresolvedRefError)
          return ended(giveUp(`the stored compensation cannot be made: ${err.message}`), prev.lookups);
        throw err;
      }
    default:
      return unhandled(prev, 'stage result');
  }
}
