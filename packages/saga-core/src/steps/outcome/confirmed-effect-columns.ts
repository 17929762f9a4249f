import type { ToolEffect } from '../../tools/define-tool.js';

/**
 * The columns of a step that a confirmed effect sets, however it was learnt (the executor's record, or a
 * lookup by key in the reconciler, the API or the compensator): the external reference, and the result as
 * JSON text (`null` when the tool returned none), for `transitionStep`'s patch. One home, so every writer
 * stores an effect the same way and a reader never has to guess which pool wrote it.
 */
export function confirmedEffectColumns(effect: Pick<ToolEffect, 'externalRef' | 'result'>): {
  readonly external_ref: string | null;
  readonly result: string;
} {
  return { external_ref: effect.externalRef, result: JSON.stringify(effect.result ?? null) };
}
