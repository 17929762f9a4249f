/**
 * A stored placeholder for the external id of the step that holds `key`. Compensations are written before
 * the forward call, when the external id (the ticket number, the payment id) does not exist yet; they point
 * at the step's key instead, and the compensator resolves the placeholder from the log when it runs.
 */
export interface StepRef {
  readonly $ref: string;
}

export function ref(key: string): StepRef {
  return { $ref: key };
}

export function isStepRef(value: unknown): value is StepRef {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as { $ref?: unknown }).$ref === 'string'
  );
}

/**
 * Replaces every {@link StepRef} in `value` with `resolve(key)`. Throws what `resolve` throws (a key whose
 * step has no external ref must not be guessed).
 */
export function resolveRefs(value: unknown, resolve: (key: string) => string): unknown {
  if (isStepRef(value)) return resolve(value.$ref);
  if (Array.isArray(value)) return value.map((v) => resolveRefs(v, resolve));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveRefs(v, resolve)]));
  }
  return value;
}
