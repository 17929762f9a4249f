import { invalidParam } from './stripe-error.js';
import { optionalInteger, optionalString, type FormParams } from './form-params.js';

/** Stripe's list envelope. */
export interface ListPage<T> {
  readonly object: 'list';
  readonly data: T[];
  readonly has_more: boolean;
  readonly url: string;
}

/** Why 10 and 100: Stripe's documented default and maximum `limit`. */
const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 100;

export function readLimit(params: FormParams): number {
  const limit = optionalInteger(params, 'limit') ?? DEFAULT_LIMIT;
  if (limit < 1 || limit > MAX_LIMIT) {
    throw invalidParam(
      'This value must be greater than or equal to 1 and less than or equal to 100.',
      'parameter_invalid_integer',
      'limit',
    );
  }
  return limit;
}

/** One page of `items` (already newest first), after `starting_after` or before `ending_before`. */
export function listPage<T extends { readonly id: string }>(
  items: readonly T[],
  params: FormParams,
  url: string,
): ListPage<T> {
  const limit = readLimit(params);
  const startingAfter = optionalString(params, 'starting_after');
  const endingBefore = optionalString(params, 'ending_before');
  if (endingBefore !== undefined) {
    const end = items.findIndex((i) => i.id === endingBefore);
    const before = end < 0 ? [] : items.slice(0, end);
    const data = before.slice(Math.max(0, before.length - limit));
    return { object: 'list', data: structuredClone(data), has_more: before.length > limit, url };
  }
  const start = startingAfter === undefined ? 0 : items.findIndex((i) => i.id === startingAfter) + 1;
  const rest = start <= 0 && startingAfter !== undefined ? [] : items.slice(start);
  return { object: 'list', data: structuredClone(rest.slice(0, limit)), has_more: rest.length > limit, url };
}
