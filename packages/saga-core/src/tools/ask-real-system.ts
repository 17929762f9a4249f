import type { Logger } from 'pino';
import type { StepRow } from '../db/schema.js';
import { storedTrace, type StoredTraceColumns } from '../tracing/stored-trace.js';
import { startTraceSpan } from '../tracing/trace-span.js';
import type { AnyTool, LookupContext } from './define-tool.js';
import { runUnderDeadline } from './run-under-deadline.js';
import { errorForLog } from '../privacy/args-for-log.js';

/**
 * The step fields a question to the real system needs; its stored trace context, when given, makes the
 * question a span of the step's trace (whose `traceparent` the tool sends).
 */
export type AskTarget = Pick<
  StepRow,
  'idempotency_key' | 'run_id' | 'step_idx' | 'tenant_id' | 'args' | 'created_at'
> &
  StoredTraceColumns;

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
 * The question is a span (`saga.<what> <tool>`) in the step's trace, and the tool gets its `traceparent`.
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
  // A child of the step's intake span (a new trace for a step stored without one).
  const span = startTraceSpan(`saga.${what} ${tool.name}`, storedTrace(step), 'client', {
    'saga.run_id': step.run_id,
    'saga.step_idx': step.step_idx,
    'saga.tool': tool.name,
  });
  const a = await runUnderDeadline(
    {
      timeoutMs: tool.timeoutMs,
      timeoutError: () => new Error(`${what} timed out after ${tool.timeoutMs} ms`),
    },
    (abort) =>
      ask({
        idempotencyKey: step.idempotency_key,
        runId: step.run_id,
        stepIdx: step.step_idx,
        tenantId: step.tenant_id,
        args: step.args,
        intendedAt: step.created_at,
        get signal() {
          return abort.signal;
        },
        logger: log,
        traceparent: span.traceparent,
      }),
  );
  span.end(a.ok ? undefined : a.error);
  if (a.ok) return { ok: true, value: a.value, at, ms: ms() };
  log.warn({ err: errorForLog(a.error, tool, step.args) }, `${what} failed`);
  const e = a.error instanceof Error ? a.error : new Error(String(a.error));
  return { ok: false, at, ms: ms(), error: { name: e.name, message: e.message } };
}
