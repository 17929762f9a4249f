import { randomUUID } from 'node:crypto';
import {
  createLogger,
  parseArgs,
  stepKey,
  type AnyTool,
  type Logger,
  type LookupContext,
  type ToolContext,
} from '@agent-saga/core';

/** A pino logger that writes nothing: these tests read outcomes and the sandbox ledger, not logs. */
export const silentLogger: Logger = createLogger({ level: 'silent', name: 'connector-test' });

/**
 * The context the executor builds for step `stepIdx` of run `runId` calling `tool`: the key is the step key,
 * so two contexts with the same run, step and tool carry the same key (a retry of that step).
 */
export function stepContext(
  tool: string,
  opts: {
    args?: Record<string, unknown>;
    runId?: string;
    stepIdx?: number;
    tenantId?: string;
    signal?: AbortSignal;
    /** When the step was recorded; now (the context is made just before the call) unless given. */
    intendedAt?: Date;
    attempt?: number;
  } = {},
): ToolContext & LookupContext {
  const runId = opts.runId ?? `run-${randomUUID()}`;
  const stepIdx = opts.stepIdx ?? 0;
  return {
    idempotencyKey: stepKey(runId, stepIdx, tool),
    runId,
    stepIdx,
    tenantId: opts.tenantId ?? 'acme',
    attempt: opts.attempt ?? 1,
    signal: opts.signal ?? AbortSignal.timeout(10_000),
    logger: silentLogger,
    intendedAt: opts.intendedAt ?? new Date(),
    args: opts.args ?? {},
  };
}

/** The tool called `name` from a connector's list; fails the test when it is missing. */
export function toolNamed(tools: readonly AnyTool[], name: string): AnyTool {
  const tool = tools.find((t) => t.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return tool;
}

/** The rejection of `promise`, or a failure if it resolved. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns non-null or `timeoutMs` passes (for searches that lag). */
export async function eventually<T>(
  probe: () => Promise<T | null>,
  timeoutMs: number,
  stepMs = 100,
): Promise<T | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null || Date.now() >= deadline) return value;
    await sleep(stepMs);
  }
}

/** Whether the tool's schema accepts `args` (what the API's intake decides before anything runs). */
export function acceptsArgs(tool: AnyTool, args: unknown): boolean {
  try {
    parseArgs(tool, args);
    return true;
  } catch {
    return false;
  }
}
