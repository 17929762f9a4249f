import { resolveRefs, StepStatus, type StepRow } from '@agent-saga/core';

// The stored command's `ref(key)` placeholders, resolved to the external refs of the run's CONFIRMED steps:
// for the lookup (`lookFirst`) and for the send (`buildCommand`).

/** The stored command as a lookup sees it: resolved where it can be, else as stored (placeholders kept). */
export function argsForLookup(
  stored: Record<string, unknown> | null,
  steps: readonly StepRow[],
): Record<string, unknown> {
  try {
    return resolveRefs(stored ?? {}, (key) => externalRefOf(steps, key)) as Record<string, unknown>;
  } catch {
    return stored ?? {};
  }
}

/** A `ref(key)` that names no CONFIRMED step with an external ref: guessing would undo the wrong thing. */
export class UnresolvedRefError extends Error {}

/** The external ref of the CONFIRMED step whose key is `key`. @throws UnresolvedRefError */
export function externalRefOf(steps: readonly StepRow[], key: string): string {
  const s = steps.find((x) => x.idempotency_key === key);
  if (!s || s.status !== StepStatus.CONFIRMED || s.external_ref === null)
    throw new UnresolvedRefError(`ref ${key} names no confirmed step with an external ref`);
  return s.external_ref;
}
