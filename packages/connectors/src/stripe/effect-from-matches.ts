import type { ToolEffect } from '@agent-saga/core';

/**
 * The effect a lookup reports for the effects it found under one key, oldest first: none → null; one → it;
 * more → the oldest, with `duplicates` listing every id, which the harness raises as an incident.
 */
export function effectFromMatches<T>(
  matches: readonly T[],
  toEffect: (match: T) => ToolEffect,
  idOf: (match: T) => string,
): ToolEffect | null {
  const [first] = matches;
  if (first === undefined) return null;
  const effect = toEffect(first);
  return matches.length > 1 ? { ...effect, duplicates: matches.map(idOf) } : effect;
}
