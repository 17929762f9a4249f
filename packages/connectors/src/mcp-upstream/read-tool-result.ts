import { readPath, type ToolEffect } from '@agent-saga/core';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * The value of a tool's answer: its `structuredContent` when it has one, else its first text content
 * parsed as JSON, else that text as it is (undefined when there is no text either).
 */
export function resultValue(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const text = result.content.find((c) => c.type === 'text')?.text;
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The text a tool gave with `isError: true`, for the error's message (trimmed: it is stored). */
export function errorText(result: CallToolResult): string {
  const text = result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join(' ');
  return (text || 'no message').slice(0, 500);
}

/** The effect an answer reports: `externalRef` read at the mapping's path (null when absent or unset). */
export function effectOf(value: unknown, externalRefPath: string | undefined): ToolEffect {
  return { externalRef: refAt(value, externalRefPath), result: value ?? null };
}

/**
 * What a lookup found, by the mapping's rule: its value (read at `resultPath`) is "found" when it is a
 * non-empty object or an array of exactly one; null, `{}`, `[]` or a scalar is "absent"; an array of more
 * is a duplicate-effect incident (every match's ref is reported, the first is the effect).
 */
export function lookupEffectOf(
  value: unknown,
  resultPath: string | undefined,
  externalRefPath: string | undefined,
): ToolEffect | null {
  const at = resultPath === undefined ? value : readPath(value, resultPath);
  if (Array.isArray(at)) {
    const [first] = at as unknown[];
    if (first === undefined) return null;
    if (at.length === 1) return effectOf(first, externalRefPath);
    return {
      ...effectOf(first, externalRefPath),
      duplicates: at.map((m, i) => refAt(m, externalRefPath) ?? `#${i}`),
    };
  }
  if (at !== null && typeof at === 'object' && Object.keys(at).length > 0)
    return effectOf(at, externalRefPath);
  return null;
}

function refAt(value: unknown, path: string | undefined): string | null {
  if (path === undefined) return null;
  const ref = readPath(value, path);
  return typeof ref === 'string' || typeof ref === 'number' ? String(ref) : null;
}
