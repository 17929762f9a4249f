import { isRefusedUnderKey, type RefusedUnderKey, type ToolEffect } from '@agent-saga/core';

/**
 * A lookup's answer read as an effect or null, for the tests of lookups that find an effect: a refusal
 * under the key fails the test here, naming it, rather than reading as a missing field later.
 */
export function effectOf(answer: ToolEffect | RefusedUnderKey | null | undefined): ToolEffect | null {
  if (answer === undefined || answer === null) return null;
  if (isRefusedUnderKey(answer)) throw new Error(`the lookup found a refusal: ${answer.refused.message}`);
  return answer;
}
