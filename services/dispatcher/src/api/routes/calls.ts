import { serializerCompiler, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Logger } from '@agent-saga/core';
import { principalOf } from '../auth.js';
import { handleCall, type CallContext } from '../handle-call.js';
import { toHttpError } from '../http-errors.js';
import { UNREGISTERED_TOOL_LABEL } from '../../metrics/api-metrics.js';
import { callAnswerBody, callBodySchema, errorBody, runIdParams } from '../schemas.js';

/** POST /v1/runs/{runId}/calls: one tool call of an agent (see `handleCall`). */
export const callRoutes: FastifyPluginAsyncZod<{ ctx: CallContext }> = (app, { ctx }) => {
  // Built once, from the configured cap: `stepIdx` and `dependsOn` past it are 400 at validation.
  const callBody = callBodySchema(ctx.config.SAGA_MAX_STEPS_PER_RUN);
  app.post(
    '/runs/:runId/calls',
    {
      // An answer (200, 202) is `presentCallOutcome`'s object, typed by `callAnswerBody`: written as it is,
      // without the type provider's check of it against the union (a parse of up to five object schemas per
      // answer, on the hottest route; docs/benchmarks.md). Every other status goes through that check.
      serializerCompiler: (route) =>
        route.httpStatus === '200' || route.httpStatus === '202'
          ? (data) => JSON.stringify(data)
          : // fastify passes the status's own response schema in `schema`, typed as the route's schema.
            serializerCompiler(route as unknown as Parameters<typeof serializerCompiler>[0]),
      schema: {
        summary: 'Call a tool within a run',
        description:
          'Pure tools run at once. Other calls are written to the saga log as an intent before anything is ' +
          'sent, and the answer waits up to waitMs for the outcome. A retry of a step never sends new ' +
          'arguments downstream. A new step that repeats an earlier step of the run that may have taken ' +
          'effect (same tool, same identity arguments; a tool without `repeatable`) is refused 409 ' +
          'DUPLICATE_OPERATION, writing nothing; while that earlier step is INTENDED or UNKNOWN (it may yet ' +
          'fail, and then this call is the one to make) the refusal is 409 STEP_UNRESOLVED naming it. On a ' +
          'governed run (a definition, a plan, a budget or `approveMoneyAbove`) a new step is matched to the ' +
          'definition and checked against the plan and budget, each refusal writing nothing; a call moving ' +
          'more than `approveMoneyAbove` is held for an approval (202 AWAITING_APPROVAL).',
        tags: ['calls'],
        security: [{ bearer: [] }],
        params: runIdParams,
        body: callBody,
        response: {
          200: callAnswerBody,
          202: callAnswerBody,
          400: errorBody.describe(
            'BAD_REQUEST (`field`: e.g. `stepIdx` or `dependsOn.0` at or past SAGA_MAX_STEPS_PER_RUN), ' +
              'INVALID_ARGS, UNKNOWN_TOOL',
          ),
          401: errorBody,
          404: errorBody,
          409: errorBody.describe(
            'STEP_LIMIT (the run holds SAGA_MAX_STEPS_PER_RUN steps: a new step at its cursor is refused, ' +
              '`limit`), STEP_CONFLICT (another tool holds stepIdx), STEP_UNRESOLVED (an earlier step is ' +
              'unresolved, or is the same operation and not settled: `stepIdx`; or its settled `outcome` was ' +
              'not yet seen), IDEMPOTENCY_MISMATCH (a retry changed identity ' +
              'arguments: `fields`), DUPLICATE_OPERATION (a new step repeats an earlier step that may have ' +
              'taken effect: its `stepIdx`, `status`, `idempotencyKey`, and `externalRef`/`result` when ' +
              'CONFIRMED), RUN_NOT_RUNNING, PIVOT_REQUIRED, PIVOT_STAGED; on a run bound to a definition: ' +
              'NOT_IN_DEFINITION (the definition does not allow the tool, or every step of it is taken), ' +
              'PLAN_MISMATCH (identity arguments differ from the planned entry: `field`, `fields`, ' +
              '`planEntry`); on a run with a budget: BUDGET_EXCEEDED (`field`: `budget.maxSteps`, ' +
              '`budget.maxAmount.<currency>`, `budget.deadline` or `budget.maxAttempts`, with `limit` and ' +
              '`used`)',
          ),
        },
      },
    },
    async (req, reply) => {
      try {
        // fastify's child of the deps' pino logger (`loggerInstance`), already bound to `reqId`; typed by
        // fastify as its narrower logger interface. One child per request, not two.
        const log = req.log as unknown as Logger;
        const answer = await handleCall(
          ctx,
          principalOf(req),
          req.params.runId,
          req.body,
          log,
          req.headers.traceparent,
        );
        return await reply.code(answer.statusCode).send(answer.body);
      } catch (err) {
        // A label from registered names only: a refused call's raw `tool` must not grow the metric.
        const tool = ctx.registry.get(req.body.tool) ? req.body.tool : UNREGISTERED_TOOL_LABEL;
        ctx.metrics.calls.inc({ tool, outcome: toHttpError(err).body.error.code });
        throw err;
      }
    },
  );
  return Promise.resolve();
};
