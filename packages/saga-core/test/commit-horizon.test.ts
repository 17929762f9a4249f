/**
 * The `commitHorizonMs` declaration: validated when the tool is declared (naming the field), defaulting to
 * the tool's own timeout (followed through a copy with a shorter timeout, as test fixtures make), and added
 * to the lookup lag by the one rule of when a "not found" may be believed (`absenceEvidenceAfterMs`).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  absenceEvidenceAfterMs,
  commitHorizonOf,
  createToolRegistry,
  defineTool,
  ToolDefinitionError,
  type ToolSpec,
} from '@agent-saga/core';

const spec = {
  name: 'create_ticket',
  class: 'irreversible',
  version: 1,
  args: z.object({ orderId: z.string() }),
  execute: () => Promise.resolve({ externalRef: 'SUP-1', result: {} }),
  lookup: () => Promise.resolve(null),
  lookupLagMs: 800,
  timeoutMs: 3_000,
} as const satisfies ToolSpec;

function refusal(patch: Record<string, unknown>): ToolDefinitionError {
  try {
    defineTool({ ...spec, ...patch });
  } catch (e) {
    if (e instanceof ToolDefinitionError) return e;
    throw e;
  }
  throw new Error('expected a ToolDefinitionError');
}

describe('commitHorizonMs', () => {
  it.each([[-1], [1.5], ['12000'], [Number.NaN], [Number.POSITIVE_INFINITY], [null]])(
    'refuses %s, naming the field',
    (bad) => {
      const e = refusal({ commitHorizonMs: bad });
      expect(e.field).toBe('commitHorizonMs');
      expect(e.message).toContain('commitHorizonMs');
      expect(e.message).toMatch(/whole number of milliseconds/);
    },
  );

  it('accepts 0 and a horizon longer than the timeout', () => {
    expect(commitHorizonOf(defineTool({ ...spec, commitHorizonMs: 0 }))).toBe(0);
    expect(commitHorizonOf(defineTool({ ...spec, commitHorizonMs: 120_000 }))).toBe(120_000);
  });

  it('defaults to the tool timeout, also on a copy whose timeout was shortened', () => {
    const tool = defineTool(spec);
    expect(commitHorizonOf(tool)).toBe(3_000);
    const shortened = createToolRegistry([{ ...tool, timeoutMs: 1_000 }]).require('create_ticket');
    expect(commitHorizonOf(shortened)).toBe(1_000);
    // A declared horizon is the vendor's, not the client's: shortening the timeout leaves it.
    const declared = defineTool({ ...spec, commitHorizonMs: 20_000 });
    expect(commitHorizonOf({ ...declared, timeoutMs: 1_000 })).toBe(20_000);
  });

  it('is added to the lookup lag: "not found" is evidence only after both', () => {
    expect(absenceEvidenceAfterMs(defineTool(spec))).toBe(3_800);
    expect(absenceEvidenceAfterMs(defineTool({ ...spec, commitHorizonMs: 12_500 }))).toBe(13_300);
    expect(absenceEvidenceAfterMs(defineTool({ ...spec, lookupLagMs: 0, commitHorizonMs: 0 }))).toBe(0);
  });
});
