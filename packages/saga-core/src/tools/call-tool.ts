import { z } from 'zod';
import { OutcomeUnknownError, SagaError } from '../errors/errors.js';
import { ErrorCode } from '../errors/error-code.js';
import type { AnyTool, ToolContext, ToolEffect } from './define-tool.js';
import { runUnderDeadline } from './run-under-deadline.js';

/** What one call of `tool.execute` came to. `reason` names which of the caller's signals cut it off. */
export type ToolCallResult =
  | { readonly ok: true; readonly effect: ToolEffect; readonly durationMs: number }
  | {
      readonly ok: false;
      readonly error: unknown;
      readonly reason: 'timeout' | 'shutdown' | undefined;
      readonly durationMs: number;
    };

/** A tool's return value is checked, not trusted: it is stored and later shown to a model. */
const effectSchema = z.object({
  externalRef: z.string().nullable().optional(),
  result: z.unknown(),
  duplicates: z.array(z.string()).readonly().optional(),
});

/** A tool returned something that is not an effect. It did run, so the outcome is UNKNOWN, not FAILED. */
class BadToolResultError extends SagaError {
  readonly code = ErrorCode.BAD_TOOL_RESULT;
}

/**
 * Calls `tool.execute` once, under {@link runUnderDeadline}: its signal fires at `tool.timeoutMs` (an
 * {@link OutcomeUnknownError}) or when `shutdownSignal` fires, and the caller stops waiting then even if
 * the tool ignores its signal, so the outcome is recorded (as UNKNOWN) before the caller's lease,
 * `timeoutMs + margin`, runs out. Every caller (executor, compensator, correction send, pure call) uses
 * this one function. Never throws; the returned effect has been checked against its schema.
 */
export async function callTool(
  tool: AnyTool,
  args: Record<string, unknown>,
  ctx: Omit<ToolContext, 'signal'>,
  shutdownSignal?: AbortSignal,
): Promise<ToolCallResult> {
  const started = performance.now();
  const durationMs = (): number => performance.now() - started;
  const call = await runUnderDeadline(
    {
      timeoutMs: tool.timeoutMs,
      timeoutError: () => new OutcomeUnknownError(`tool ${tool.name} timed out after ${tool.timeoutMs} ms`),
      ...(shutdownSignal ? { shutdownSignal } : {}),
    },
    // The signal is read through: a tool that never reads it costs no AbortController (runUnderDeadline).
    (abort) =>
      tool.execute(args, {
        ...ctx,
        get signal() {
          return abort.signal;
        },
      }),
  );
  if (!call.ok) return { ok: false, error: call.error, reason: call.reason, durationMs: durationMs() };
  const parsed = effectSchema.safeParse(call.value);
  if (!parsed.success)
    return {
      ok: false,
      error: new BadToolResultError(`tool ${tool.name} returned no { externalRef, result }`),
      reason: undefined,
      durationMs: durationMs(),
    };
  const { externalRef, result, duplicates } = parsed.data;
  return {
    ok: true,
    effect: { externalRef: externalRef ?? null, result, ...(duplicates ? { duplicates } : {}) },
    durationMs: durationMs(),
  };
}
