import { z } from 'zod';
import {
  OutcomeUnknownError,
  SagaError,
  ToolErrorCode,
  type AnyTool,
  type ToolContext,
  type ToolEffect,
} from '@agent-saga/core';

/** What one call of `tool.execute` came to. `reason` names which of the executor's signals cut it off. */
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
  readonly code = ToolErrorCode.BAD_TOOL_RESULT;
}

/**
 * Calls `tool.execute` with an abort signal that fires at `tool.timeoutMs` or when the executor shuts
 * down, and stops waiting when it fires even if the tool ignores its signal: the outcome must be recorded
 * (as UNKNOWN) before the step's lease, `timeoutMs + LEASE_MARGIN_MS`, runs out.
 */
export async function callTool(
  tool: AnyTool,
  args: Record<string, unknown>,
  ctx: Omit<ToolContext, 'signal'>,
  shutdownSignal: AbortSignal,
): Promise<ToolCallResult> {
  const started = performance.now();
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new OutcomeUnknownError(`tool ${tool.name} timed out after ${tool.timeoutMs} ms`)),
    tool.timeoutMs,
  );
  const signal = AbortSignal.any([timeout.signal, shutdownSignal]);
  const aborted = new Promise<never>((_, reject) => {
    const fire = (): void =>
      reject(signal.reason instanceof Error ? signal.reason : new OutcomeUnknownError('aborted'));
    if (signal.aborted) fire();
    else signal.addEventListener('abort', fire, { once: true });
  });
  aborted.catch(() => {}); // settled after the race is decided: not an unhandled rejection
  try {
    const raw: unknown = await Promise.race([
      Promise.resolve().then(() => tool.execute(args, { ...ctx, signal })),
      aborted,
    ]);
    const parsed = effectSchema.safeParse(raw);
    if (!parsed.success)
      throw new BadToolResultError(`tool ${tool.name} returned no { externalRef, result }`);
    const { externalRef, result, duplicates } = parsed.data;
    return {
      ok: true,
      effect: { externalRef: externalRef ?? null, result, ...(duplicates ? { duplicates } : {}) },
      durationMs: performance.now() - started,
    };
  } catch (error) {
    const reason = timeout.signal.aborted ? 'timeout' : shutdownSignal.aborted ? 'shutdown' : undefined;
    return { ok: false, error, reason, durationMs: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}
