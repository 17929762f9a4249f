import type { Logger } from 'pino';
import type { StepRow } from '../db/schema.js';
import type { AnyTool, LookupContext } from './define-tool.js';
import { runUnderDeadline } from './run-under-deadline.js';

/** The step fields a question to the real system needs. */
export type AskTarget = Pick<StepRow, 'idempotency_key' | 'run_id' | 'step_idx' | 'tenant_id' | 'args'>;

/** What a question to the real system gave: its answer, or the error, with when and how long it took. */
export type Answered<T> =
  | { readonly ok: true; readonly value: T; readonly at: Date; readonly ms: number }
  | {
      readonly ok: false;
      readonly at: Date;
      readonly ms: number;
      readonly error: { readonly name: string; readonly message: string };
    };

/**
 * Asks the real system something about a step outside any transaction (a lookup by key, a precondition):
 * builds the tool's {@link LookupContext} and bounds the question by the tool's `timeoutMs` with the same
 * rule as every tool call ({@link runUnderDeadline}: a question that hangs is an error, never an answer).
 * Never throws: a failure is `ok: false` with the error.
 */
export async function askRealSystem<T>(
  tool: AnyTool,
  step: AskTarget,
  log: Logger,
  what: string,
  ask: (ctx: LookupContext) => Promise<T>,
): Promise<Answered<T>> {
  const at = new Date();
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const a = await runUnderDeadline(
    {
      timeoutMs: tool.timeoutMs,
      timeoutError: () => new Error(`${what} timed out after ${tool.timeoutMs} ms`),
    },
    (signal) =>
      ask({
        idempotencyKey: step.idempotency_key,
        runId: step.run_id,
        stepIdx: step.step_idx,
        tenantId: step.tenant_id,
        args: step.args,
        signal,
        logger: log,
      }),
  );
  if (a.ok) return { ok: true, value: a.value, at, ms: ms() };
  log.warn({ err: a.error }, `${what} failed`);
  const e = a.error instanceof Error ? a.error : new Error(String(a.error));
  return { ok: false, at, ms: ms(), error: { name: e.name, message: e.message } };
}
