import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolRegistry, defineTool, ref, ToolDefinitionError, type ToolSpec } from '@agent-saga/core';

const lookup = () => Promise.resolve(null);
const execute = () => Promise.resolve({ externalRef: 'X-1', result: {} });
const closeTicket = defineTool({
  name: 'close_ticket',
  class: 'irreversible',
  version: 1,
  args: z.object({ ticket: z.unknown(), reason: z.string() }),
  execute,
  lookup,
});
const createTicket = {
  name: 'create_ticket',
  class: 'compensatable',
  version: 1,
  args: z.object({ summary: z.string(), orderId: z.string() }),
  identity: ['orderId'],
  compensate: (_a: unknown, key: string) => ({
    tool: 'close_ticket',
    args: { ticket: ref(key), reason: 'rolled back' },
  }),
  execute,
  lookup,
} as const satisfies ToolSpec;

function refusal(fn: () => unknown): ToolDefinitionError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ToolDefinitionError) return e;
    throw e;
  }
  throw new Error('expected a ToolDefinitionError');
}

describe('tool registration', () => {
  it('accepts a well-formed compensatable tool and fills defaults', () => {
    const tool = defineTool(createTicket);
    expect(tool.lookupLagMs).toBe(0);
    expect(tool.timeoutMs).toBe(30_000);
    expect(tool.audience({ summary: 's', orderId: '1' })).toEqual([]);
    const registry = createToolRegistry([tool, closeTicket]);
    expect(registry.require('create_ticket').class).toBe('compensatable');
  });

  it('refuses a tool without a class, naming the field', () => {
    const e = refusal(() => defineTool({ ...createTicket, class: undefined } as unknown as ToolSpec));
    expect(e.field).toBe('class');
    expect(e.message).toMatch(/class.*required/);
  });

  it('refuses a description, moves or deletes of the wrong kind, naming the field', () => {
    const bad = (patch: Record<string, unknown>) =>
      refusal(() => defineTool({ ...createTicket, ...patch })).field;
    expect(bad({ description: 'x'.repeat(1025) })).toBe('description');
    expect(bad({ description: 42 })).toBe('description');
    expect(bad({ moves: { currency: 'usd', amount: 1 } })).toBe('moves');
    expect(bad({ deletes: 'yes' })).toBe('deletes');
    expect(defineTool({ ...createTicket, description: 'Opens a ticket.', deletes: true }).deletes).toBe(true);
  });

  it('refuses a dedupesByKey that is not a boolean, naming the field; defaults to false; keeps true', () => {
    const e = refusal(() => defineTool({ ...createTicket, dedupesByKey: 'yes' } as unknown as ToolSpec));
    expect(e.field).toBe('dedupesByKey');
    expect(e.message).toMatch(/dedupesByKey/);
    expect(defineTool(createTicket).dedupesByKey).toBe(false);
    const deduping = defineTool({ ...createTicket, dedupesByKey: true });
    expect(deduping.dedupesByKey).toBe(true);
    // The registry validates again: the declaration survives it.
    expect(createToolRegistry([deduping, closeTicket]).require('create_ticket').dedupesByKey).toBe(true);
  });

  it('keeps a declared audience list through the registry, and knows a function of the arguments from it', () => {
    const listed = defineTool({ ...createTicket, audience: ['support_team'] });
    const byArgs = defineTool({ ...createTicket, audience: () => ['customer'] });
    const registry = createToolRegistry([listed, closeTicket]);
    expect(registry.require('create_ticket').fixedAudience).toEqual(['support_team']);
    expect(byArgs.fixedAudience).toBeNull();
    expect(defineTool(createTicket).fixedAudience).toEqual([]);
  });

  it('refuses an unknown class', () => {
    expect(
      refusal(() => defineTool({ ...createTicket, class: 'undoable' } as unknown as ToolSpec)).field,
    ).toBe('class');
  });

  it('refuses a compensatable or reversible tool without a compensation', () => {
    for (const cls of ['compensatable', 'reversible'] as const) {
      const e = refusal(() => defineTool({ ...createTicket, class: cls, compensate: undefined }));
      expect(e.field).toBe('compensate');
    }
  });

  it('refuses a side-effecting tool without a lookup, but not a pure one', () => {
    expect(refusal(() => defineTool({ ...closeTicket, lookup: undefined })).field).toBe('lookup');
    expect(() =>
      defineTool({ name: 'read', class: 'pure', version: 1, args: z.object({}), execute }),
    ).not.toThrow();
  });

  it('refuses a compensation that names an unregistered tool', () => {
    const e = refusal(() => createToolRegistry([defineTool(createTicket)]));
    expect(e.field).toBe('compensate');
    expect(e.message).toContain('close_ticket');
  });

  it('refuses two tools with one name, and bad names', () => {
    expect(refusal(() => createToolRegistry([closeTicket, closeTicket])).message).toMatch(/registered twice/);
    expect(refusal(() => defineTool({ ...closeTicket, name: 'Close-Ticket' })).field).toBe('name');
  });

  it('answers an unknown tool with ToolNotRegisteredError', () => {
    const registry = createToolRegistry([closeTicket]);
    expect(() => registry.require('nope')).toThrow(/not registered/);
    expect(registry.get('nope')).toBeUndefined();
  });
});
