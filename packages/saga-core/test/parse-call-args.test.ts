/**
 * Arguments as a caller wrote them, at intake: the tool's schema, then what zod would let through without
 * a word (a field it does not know) or what Postgres would refuse later (a NUL, a lone surrogate).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, InvalidArgsError, parseArgs, parseCallArgs, ToolClass } from '../src/index.js';

const tool = (over: { acceptsUnknownArgs?: boolean; args?: z.ZodType<Record<string, unknown>> } = {}) =>
  defineTool({
    name: 'ship',
    class: ToolClass.IRREVERSIBLE,
    version: 1,
    args:
      over.args ??
      z.object({
        orderId: z.string(),
        items: z.array(z.object({ sku: z.string(), qty: z.number().int().default(1) })),
        note: z.string().optional(),
      }),
    ...(over.acceptsUnknownArgs === undefined ? {} : { acceptsUnknownArgs: over.acceptsUnknownArgs }),
    execute: () => Promise.resolve({ externalRef: null, result: null }),
    lookup: () => Promise.resolve(null),
  });

function refusal(fn: () => unknown): InvalidArgsError {
  try {
    fn();
  } catch (err) {
    if (err instanceof InvalidArgsError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('parseCallArgs', () => {
  it('takes what the schema takes, defaults filled in', () => {
    expect(parseCallArgs(tool(), { orderId: 'o1', items: [{ sku: 'a' }] })).toEqual({
      orderId: 'o1',
      items: [{ sku: 'a', qty: 1 }],
    });
  });

  it('refuses every field the schema does not know, at any depth, naming the first', () => {
    const err = refusal(() =>
      parseCallArgs(tool(), {
        orderId: 'o1',
        items: [{ sku: 'a' }, { sku: 'b', colour: 'red' }],
        notes: 'x',
      }),
    );
    expect(err.field).toBe('args.items.1.colour');
    expect(err.issues.map((i) => i.field)).toEqual(['args.items.1.colour', 'args.notes']);
    expect(err.message).toContain('is not an argument of ship (it takes orderId, items, note)');
  });

  it('lets a tool that opts out keep its unknown fields to itself, as parseArgs always did', () => {
    const args = { orderId: 'o1', items: [], extra: 1 };
    expect(parseCallArgs(tool({ acceptsUnknownArgs: true }), args)).toEqual({ orderId: 'o1', items: [] });
    expect(parseArgs(tool(), args)).toEqual({ orderId: 'o1', items: [] });
  });

  it('keeps every key of a record schema', () => {
    const t = tool({ args: z.object({ vars: z.record(z.string(), z.string()) }) });
    expect(parseCallArgs(t, { vars: { a: '1', b: '2' } })).toEqual({ vars: { a: '1', b: '2' } });
  });

  it('refuses a string Postgres cannot store before the schema reads it', () => {
    expect(refusal(() => parseCallArgs(tool(), { orderId: 'o\u00001', items: [] })).field).toBe(
      'args.orderId',
    );
    expect(refusal(() => parseCallArgs(tool(), { orderId: 'o1', items: [{ sku: '\udc00' }] })).field).toBe(
      'args.items.0.sku',
    );
    // A paired surrogate is one character (an emoji), stored as it is.
    expect(parseCallArgs(tool(), { orderId: '📦', items: [] })).toEqual({ orderId: '📦', items: [] });
  });
});

describe('defineTool', () => {
  it('refuses a name over 100 characters and a non-boolean acceptsUnknownArgs', () => {
    expect(() => defineTool({ ...tool(), name: 'a'.repeat(101) })).toThrow(/name: must be at most 100/);
    expect(() => defineTool({ ...tool(), acceptsUnknownArgs: 'yes' as never })).toThrow(
      /acceptsUnknownArgs: must be true or false/,
    );
  });
});
