import { InvalidArgsError } from '../errors/errors.js';
import type { z } from 'zod';
import type { AnyTool } from './define-tool.js';
import { findUnstorableText } from '../util/unstorable-text.js';
import { redactPaths, SECRET_MARK } from '../privacy/redact-personal.js';

/** Parses untrusted (model-written) arguments with the tool's schema; never casts. */
export function parseArgs(tool: AnyTool, args: unknown): Record<string, unknown> {
  const schema = tool.args as z.ZodType<Record<string, unknown>>;
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i: z.core.$ZodIssue) => ({
    field: ['args', ...i.path.map(String)].join('.'),
    message: i.message,
  }));
  const first = issues[0] ?? { field: 'args', message: 'invalid' };
  return failWith(first, issues);
}

/**
 * Parses arguments as a caller wrote them (a model, an app), at intake, where a refusal still writes
 * nothing: besides the tool's schema ({@link parseArgs}), a string Postgres cannot store (a NUL, an
 * unpaired surrogate) is refused naming its field, and so is a field the schema does not know, unless the
 * tool `acceptsUnknownArgs`. Stored arguments and compensations the harness built are read with
 * `parseArgs`: they were checked when they came in, or written by a tool's own `compensate`.
 */
export function parseCallArgs(tool: AnyTool, args: unknown): Record<string, unknown> {
  const unstorable = findUnstorableText(args, 'args');
  if (unstorable) {
    const issue = { field: unstorable.field, message: unstorable.reason };
    return failWith(issue, [issue]);
  }
  const parsed = parseArgs(tool, args);
  if (tool.acceptsUnknownArgs) return parsed;
  const unknown = droppedFields(args, parsed, 'args');
  if (unknown.length === 0) return parsed;
  const issues = unknown.map((field) => ({
    field,
    message: `is not an argument of ${tool.name} (it takes ${describeKeys(tool)})`,
  }));
  return failWith(issues[0]!, issues);
}

/**
 * The input fields the schema dropped: keys of an input object missing from the parsed object at the same
 * place, as dotted paths, in input order (arrays compared index by index). A field the schema defaults or
 * adds is no concern: only what the caller wrote and the schema did not keep.
 */
function droppedFields(input: unknown, output: unknown, at: string): string[] {
  if (Array.isArray(input) && Array.isArray(output))
    return input.flatMap((v, i) => droppedFields(v, output[i], `${at}.${i}`));
  if (!isPlainObject(input) || !isPlainObject(output)) return [];
  return Object.entries(input).flatMap(([k, v]) =>
    Object.hasOwn(output, k) ? droppedFields(v, output[k], `${at}.${k}`) : [`${at}.${k}`],
  );
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** The top-level fields of a tool's schema, for the refusal's message (`amount, currency, …`). */
function describeKeys(tool: AnyTool): string {
  const shape = (tool.args as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape).join(', ') : 'the fields of its input schema';
}

function failWith(
  first: { field: string; message: string },
  issues: { field: string; message: string }[],
): never {
  throw new InvalidArgsError(first.field, `${first.field}: ${first.message}`, issues);
}

/** Reads a dotted path (`order.id`) from an argument object. */
export function readPath(value: unknown, path: string): unknown {
  let cur: unknown = value;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * Returns a copy of `args` with every secret path replaced by "[REDACTED]" (personal paths kept): for what
 * operators read (approval evidence, pivot actions). Views for agents and log lines go further; the rule
 * lives in `privacy/redact-personal.ts`.
 */
export function redactArgs(tool: AnyTool, args: unknown): unknown {
  return redactPaths(args, tool.secret, SECRET_MARK);
}
