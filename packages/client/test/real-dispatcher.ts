/**
 * The real dispatcher API on a free port, for tests of the client and the CLI against the wire contract as
 * the dispatcher serves it: `buildApi` on the test file's own Postgres schema and BullMQ prefix, real
 * tokens, and a small tool module declared here. No executor runs: a test that needs a step settled plays
 * the executor or the reconciler through core's compare-and-set operations (`confirmStep`, `giveUp`), the
 * same writes those processes make.
 *
 * `@agent-saga/dispatcher` is resolved through the workspace root, which depends on it; the client does not
 * declare it, because the dispatcher already depends on the client (a declared cycle would be worse).
 */
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import {
  createApiToken,
  createLogger,
  createToolRegistry,
  defineTool,
  openCase,
  ref,
  bullmqConnection,
  StepStatus,
  transitionStep,
  type AnyTool,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import { buildApi, createExecuteQueue, loadDispatcherConfig, type ApiApp } from '@agent-saga/dispatcher';

/** How long the fixture's payment hold lasts: a card authorisation, about seven days. */
export const HOLD_WINDOW_MS = 7 * 24 * 3600_000;

/** Tenant `t1` (every token but `otherOperator`) and tenant `t2`. */
export const TENANT = 't1';

export interface RealDispatcher {
  readonly url: string;
  readonly env: TestEnv;
  /** Operator of t1, labelled `alice` (the actor recorded on its decisions). */
  readonly operatorToken: string;
  /** Agent of t1. */
  readonly agentToken: string;
  /** Operator of t2, labelled `mallory`: sees none of t1's items. */
  readonly otherOperatorToken: string;
  /** Plays the executor: the INTENDED step becomes CONFIRMED with `externalRef`. */
  confirmStep(runId: string, stepIdx: number, externalRef: string): Promise<void>;
  /**
   * Plays the reconciler giving up: the INTENDED step becomes UNKNOWN, then MANUAL_INTERVENTION, and a case
   * opens with `evidence`. Returns nothing: the case is found through the API, as an operator finds it.
   */
  giveUp(runId: string, stepIdx: number, reason: string, evidence: Record<string, unknown>): Promise<void>;
  /** Plays the compensator queueing a correction of step `stepIdx` for a person. */
  queueCorrection(
    runId: string,
    stepIdx: number,
    audience: readonly string[],
    command: { template: string; to: string; vars: Record<string, unknown> },
  ): Promise<void>;
  close(): Promise<void>;
}

/**
 * The tool module: a compensatable note, a reversible payment hold, an irreversible customer notice, and the
 * email tool corrections are sent with (`send_email`). Their effects are answers, not rows: nothing here
 * counts effects, so nothing needs a table.
 */
function fixtureTools(): AnyTool[] {
  const noEffect = () => Promise.resolve(null);
  const effect = (prefix: string) => (_args: unknown, ctx: { idempotencyKey: string }) =>
    Promise.resolve({ externalRef: `${prefix}-${ctx.idempotencyKey.slice(-8)}`, result: { ok: true } });
  return [
    defineTool({
      name: 'draft_note',
      class: 'compensatable',
      version: 1,
      args: z.object({ orderId: z.string().min(1), text: z.string(), apiToken: z.string().optional() }),
      identity: ['orderId'],
      secret: ['apiToken'],
      audience: ['support_team'],
      compensate: (_args, key) => ({ tool: 'delete_note', args: { note: ref(key) } }),
      execute: effect('NOTE'),
      lookup: noEffect,
    }),
    defineTool({
      name: 'delete_note',
      class: 'irreversible',
      version: 1,
      args: z.object({ note: z.union([z.string(), z.object({ $ref: z.string() })]) }),
      audience: ['support_team'],
      execute: effect('DEL'),
      lookup: noEffect,
    }),
    defineTool({
      name: 'hold_funds',
      class: 'reversible',
      version: 1,
      args: z.object({ customerId: z.string(), amount: z.number().int().positive() }),
      audience: ['finance'],
      compensate: (_args, key) => ({ tool: 'release_funds', args: { hold: ref(key) } }),
      execute: effect('HOLD'),
      lookup: noEffect,
      holdWindowMs: HOLD_WINDOW_MS,
    }),
    defineTool({
      name: 'release_funds',
      class: 'irreversible',
      version: 1,
      args: z.object({ hold: z.union([z.string(), z.object({ $ref: z.string() })]) }),
      audience: ['finance'],
      execute: effect('REL'),
      lookup: noEffect,
    }),
    defineTool({
      name: 'notify_customer',
      class: 'irreversible',
      version: 1,
      args: z.object({ to: z.string().email(), text: z.string() }),
      audience: ['customer'],
      execute: effect('MSG'),
      lookup: noEffect,
    }),
    defineTool({
      name: 'send_email',
      class: 'irreversible',
      version: 1,
      args: z.object({ template: z.string(), to: z.string(), vars: z.record(z.string(), z.unknown()) }),
      audience: ['customer'],
      execute: effect('EM'),
      lookup: noEffect,
    }),
  ] as AnyTool[];
}

export async function startRealDispatcher(label: string): Promise<RealDispatcher> {
  const env = await createTestEnv(label);
  const config = loadDispatcherConfig({
    ...env.env,
    SAGA_TOOLS: '(in process)',
    // No relay or executor runs: the API writes intents and answers 202 at once.
    SAGA_FAST_PATH: 'false',
    CALL_WAIT_DEFAULT_MS: '1',
    LOG_LEVEL: 'silent',
  });
  const queue = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
  let app: ApiApp | undefined;
  try {
    ({ app } = await buildApi({
      db: env.db,
      schema: env.schema,
      registry: createToolRegistry(fixtureTools()),
      queue,
      config,
      logger: createLogger({ level: 'silent', name: `real-dispatcher-${label}` }),
    }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const [operatorToken, agentToken, otherOperatorToken] = await Promise.all([
      createApiToken(env.db, { tenantId: TENANT, role: 'operator', label: 'alice' }),
      createApiToken(env.db, { tenantId: TENANT, role: 'agent' }),
      createApiToken(env.db, { tenantId: 't2', role: 'operator', label: 'mallory' }),
    ]);
    const served = app;
    return {
      url: `http://127.0.0.1:${port}`,
      env,
      operatorToken,
      agentToken,
      otherOperatorToken,
      async confirmStep(runId, stepIdx, externalRef) {
        await env.db.transaction().execute((trx) =>
          transitionStep(trx, {
            runId,
            stepIdx,
            to: StepStatus.CONFIRMED,
            cause: 'test: executor',
            schema: env.schema,
            patch: { external_ref: externalRef, result: JSON.stringify({ ok: true }) },
          }),
        );
      },
      async giveUp(runId, stepIdx, reason, evidence) {
        await env.db.transaction().execute(async (trx) => {
          for (const to of [StepStatus.UNKNOWN, StepStatus.MANUAL_INTERVENTION])
            await transitionStep(trx, { runId, stepIdx, to, cause: 'test: reconciler', schema: env.schema });
          await openCase(trx, { runId, stepIdx, tenantId: TENANT, reason, evidence });
        });
      },
      async queueCorrection(runId, stepIdx, audience, command) {
        await env.db
          .insertInto('corrections')
          .values({
            run_id: runId,
            step_idx: stepIdx,
            tenant_id: TENANT,
            command: JSON.stringify(command),
            audience: [...audience],
            status: 'open',
          })
          .execute();
      },
      async close() {
        await served.close();
        await queue.obliterate({ force: true }).catch(() => undefined);
        await queue.close();
        await env.close();
      },
    };
  } catch (err) {
    await app?.close();
    await queue.close();
    await env.close();
    throw err;
  }
}
