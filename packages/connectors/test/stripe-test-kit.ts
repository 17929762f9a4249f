import { randomUUID } from 'node:crypto';
import { createLogger, stepKey, type Logger, type LookupContext, type ToolContext } from '@agent-saga/core';
import type { RunningSandbox } from '@agent-saga/sandbox';
import { stripeConfigFromEnv, type StripeConfig } from '../src/index.js';

/** A pino logger that writes nothing: the tests read outcomes, not logs. */
export const silentLogger: Logger = createLogger({ level: 'silent', name: 'stripe-test' });

/** Connector config pointing at the in-process sandbox. */
export function sandboxStripeConfig(
  sandbox: RunningSandbox,
  extra: Record<string, string> = {},
): StripeConfig {
  return stripeConfigFromEnv({
    STRIPE_SECRET_KEY: sandbox.credentials.stripeSecretKey,
    STRIPE_API_BASE: sandbox.urls.stripe,
    STRIPE_TIMEOUT_MS: '5000',
    ...extra,
  });
}

/**
 * The context the executor would build for step `stepIdx` of a fresh run calling `tool`: its key is the
 * step key, so two contexts built with the same `runId` carry the same key (a retry of the step).
 */
export function stepContext(
  tool: string,
  opts: {
    args?: Record<string, unknown>;
    runId?: string;
    stepIdx?: number;
    key?: string;
    signal?: AbortSignal;
    /** When the step was recorded; now (the context is made just before the call) unless given. */
    intendedAt?: Date;
  } = {},
): ToolContext & LookupContext {
  const runId = opts.runId ?? `run-${randomUUID()}`;
  const stepIdx = opts.stepIdx ?? 0;
  return {
    idempotencyKey: opts.key ?? stepKey(runId, stepIdx, tool),
    runId,
    stepIdx,
    tenantId: 'acme',
    attempt: 1,
    signal: opts.signal ?? new AbortController().signal,
    logger: silentLogger,
    intendedAt: opts.intendedAt ?? new Date(),
    args: opts.args ?? {},
  };
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
