import { InvalidArgsError } from '../errors/errors.js';
import type { z } from 'zod';
import type { AnyTool } from './define-tool.js';

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

/** Returns a copy of `args` with every secret path replaced by "[REDACTED]", for logs. */
export function redactArgs(tool: AnyTool, args: unknown): unknown {
  if (tool.secret.length === 0 || args === null || typeof args !== 'object') return args;
  const copy = structuredClone(args) as Record<string, unknown>;
  for (const path of tool.secret) {
    const parts = path.split('.');
    let cur: Record<string, unknown> | undefined = copy;
    for (const part of parts.slice(0, -1)) {
      const next: unknown = cur?.[part];
      cur = next !== null && typeof next === 'object' ? (next as Record<string, unknown>) : undefined;
    }
    const last = parts[parts.length - 1]!;
    if (cur && last in cur) cur[last] = '[REDACTED]';
  }
  return copy;
}
