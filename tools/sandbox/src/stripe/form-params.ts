import { parse } from 'qs';
import type { FastifyInstance } from 'fastify';
import { invalidParam, missingParam } from './stripe-error.js';

/** Parameters of a Stripe request after `qs` parsing: strings, nested objects and arrays of them. */
export type FormParams = Record<string, unknown>;

/**
 * Why these limits: Stripe objects nest at most a few levels (`invoice_settings[default_payment_method]`,
 * `created[gte]`); metadata takes at most 50 keys. Tighter than qs's defaults, so a hostile body stays small.
 */
const QS_OPTIONS = { depth: 5, arrayLimit: 100, parameterLimit: 1_000 } as const;

/** Parses `a[b]=c&expand[0]=d` (and `expand[]=d`) into nested objects and arrays, as Stripe does. */
export function parseForm(text: string): FormParams {
  return parse(text, QS_OPTIONS);
}

/** Makes the app parse `application/x-www-form-urlencoded` bodies with nested keys. */
export function registerFormParser(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 1_048_576 },
    (_request, body, done) => {
      done(null, parseForm(typeof body === 'string' ? body : body.toString('utf8')));
    },
  );
}

/** Stripe rejects parameters it does not know: so must the sandbox, or a typo would pass here and fail live. */
export function assertKnownParams(params: FormParams, known: readonly string[]): void {
  for (const name of Object.keys(params)) {
    if (!known.includes(name))
      throw invalidParam(`Received unknown parameter: ${name}`, 'parameter_unknown', name);
  }
}

export function optionalString(params: FormParams, name: string): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw invalidParam(`Invalid string: ${name}`, 'parameter_invalid_string', name);
  return value === '' ? undefined : value;
}

export function requiredString(params: FormParams, name: string): string {
  const value = optionalString(params, name);
  if (value === undefined) throw missingParam(name);
  return value;
}

export function optionalInteger(params: FormParams, name: string): number | undefined {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value)) {
    throw invalidParam(
      `Invalid integer: ${typeof value === 'string' ? value : JSON.stringify(value)}`,
      'parameter_invalid_integer',
      name,
    );
  }
  return Number(value);
}

export function requiredInteger(params: FormParams, name: string): number {
  const value = optionalInteger(params, name);
  if (value === undefined) throw missingParam(name);
  return value;
}

export function optionalBoolean(params: FormParams, name: string): boolean | undefined {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw invalidParam(
    `Invalid boolean: ${typeof value === 'string' ? value : JSON.stringify(value)}`,
    'parameter_invalid_boolean',
    name,
  );
}

export function optionalEnum<T extends string>(
  params: FormParams,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const value = optionalString(params, name);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw invalidParam(
      `Invalid ${name}: must be one of ${allowed.join(', ')}`,
      'parameter_invalid_string',
      name,
    );
  }
  return value as T;
}

/** `expand[]=latest_charge` or `expand[0]=latest_charge`, as a list. */
export function expandList(params: FormParams): readonly string[] {
  const value = params.expand;
  if (value === undefined) return [];
  const list = Array.isArray(value)
    ? value
    : typeof value === 'object' && value !== null
      ? Object.values(value)
      : [value];
  return list.filter((v): v is string => typeof v === 'string');
}

/** Why 50/40/500: Stripe's documented metadata limits (keys, key length, value length). */
const METADATA_LIMITS = { keys: 50, keyLength: 40, valueLength: 500 } as const;

/**
 * Applies `metadata[k]=v` updates to `current`: an empty value unsets the key, as Stripe documents; an
 * empty `metadata=` clears all.
 */
export function applyMetadata(
  params: FormParams,
  current: Readonly<Record<string, string>>,
): Record<string, string> {
  const value = params.metadata;
  if (value === undefined) return { ...current };
  if (value === '') return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidParam('Invalid hash', 'parameter_invalid_empty', 'metadata');
  }
  const next: Record<string, string> = { ...current };
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string')
      throw invalidParam('Invalid metadata value', 'parameter_invalid_string', `metadata[${key}]`);
    if (key.length > METADATA_LIMITS.keyLength) {
      throw invalidParam(
        `Metadata keys can have up to ${METADATA_LIMITS.keyLength} characters.`,
        'parameter_invalid_string',
        `metadata[${key}]`,
      );
    }
    if (v.length > METADATA_LIMITS.valueLength) {
      throw invalidParam(
        `Metadata values can have up to ${METADATA_LIMITS.valueLength} characters.`,
        'parameter_invalid_string',
        `metadata[${key}]`,
      );
    }
    if (v === '') delete next[key];
    else next[key] = v;
  }
  if (Object.keys(next).length > METADATA_LIMITS.keys) {
    throw invalidParam(
      `Metadata can have up to ${METADATA_LIMITS.keys} keys.`,
      'parameter_invalid_string',
      'metadata',
    );
  }
  return next;
}
