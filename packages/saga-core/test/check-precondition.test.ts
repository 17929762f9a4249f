import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  checkPrecondition,
  createLogger,
  defineTool,
  preconditionEvidence,
  ref,
  ToolDefinitionError,
  type PreconditionCheck,
  type ToolSpec,
} from '@agent-saga/core';

const log = createLogger({ level: 'silent', name: 'precondition-test' });
const spec = {
  name: 'create_ticket',
  class: 'compensatable',
  version: 1,
  args: z.object({ summary: z.string() }),
  compensate: (_a: unknown, key: string) => ({ tool: 'close_ticket', args: { ticket: ref(key) } }),
  execute: () => Promise.resolve({ externalRef: 'T-1', result: { status: 'open' } }),
  lookup: () => Promise.resolve(null),
  timeoutMs: 200,
} as const satisfies ToolSpec;
const step = {
  idempotency_key: 'k',
  run_id: 'r',
  step_idx: 0,
  tenant_id: 't',
  args: { summary: 's' },
  external_ref: 'T-1',
  result: { status: 'open' },
  created_at: new Date(),
};
const withCheck = (precondition: PreconditionCheck) => defineTool({ ...spec, precondition });

describe('precondition of a forward tool', () => {
  it('is optional: a tool without one is checked as `none`', async () => {
    expect(await checkPrecondition(defineTool(spec), step, log)).toEqual({ kind: 'none' });
  });

  it('refuses a precondition that is not a function, naming the field', () => {
    const bad = { ...spec, precondition: 'as_left' } as unknown as ToolSpec;
    expect(() => defineTool(bad)).toThrow(ToolDefinitionError);
  });

  it('passes the forward effect as recorded and reports each verdict', async () => {
    let seen: unknown;
    const tool = withCheck((forward, ctx) => {
      seen = { forward, key: ctx.idempotencyKey };
      return Promise.resolve('already_compensated');
    });
    const o = await checkPrecondition(tool, step, log);
    expect(o.kind).toBe('already_compensated');
    expect(seen).toEqual({ forward: { externalRef: 'T-1', result: { status: 'open' } }, key: 'k' });
    const changed = await checkPrecondition(
      withCheck(() => Promise.resolve({ changed: 'reopened by a person' })),
      step,
      log,
    );
    expect(preconditionEvidence(changed)).toMatchObject({
      precondition: 'changed',
      changed: 'reopened by a person',
    });
    expect(
      (
        await checkPrecondition(
          withCheck(() => Promise.resolve('as_left')),
          step,
          log,
        )
      ).kind,
    ).toBe('as_left');
  });

  it('a check that throws or hangs decides nothing: an error observation', async () => {
    const threw = await checkPrecondition(
      withCheck(() => Promise.reject(new Error('503'))),
      step,
      log,
    );
    expect(threw).toMatchObject({ kind: 'error', error: { message: '503' } });
    const hung = await checkPrecondition(
      withCheck(() => new Promise(() => undefined)),
      step,
      log,
    );
    expect(hung).toMatchObject({ kind: 'error', error: { message: 'precondition timed out after 200 ms' } });
  });
});
