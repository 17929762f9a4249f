import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { completeRun, requestUnwind, RunStatus, valuesOf } from '@agent-saga/core';
import type { ApiDeps } from '../api-deps.js';
import { principalOf } from '../auth.js';
import { errorBody, runIdParams } from '../schemas.js';

const unwindBody = z.object({
  reason: z.string().min(1).max(2_000).describe('Why the run is undone; kept as the run status reason'),
});
const runStatusAnswer = z.object({ runId: z.string(), status: z.enum(valuesOf(RunStatus)) });

/**
 * The end of a run: `unwind` hands it to the compensator (RUNNING → COMPENSATING; the compensator undoes
 * its effects from the log), `complete` finishes it forward once every step is settled. Agent and operator
 * tokens may do both.
 */
export const unwindRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = (app, { deps }) => {
  app.post(
    '/runs/:runId/unwind',
    {
      schema: {
        summary: 'Unwind a run: undo its effects by their stored compensations',
        description:
          'The run moves to COMPENSATING and refuses new side-effecting calls; the compensator settles every ' +
          'unknown step, then runs the stored compensations in reverse dependency order. Asking again while ' +
          'it compensates answers 202 again; a run in a terminal status answers 409 RUN_NOT_RUNNING.',
        tags: ['runs'],
        security: [{ bearer: [] }],
        params: runIdParams,
        body: unwindBody,
        response: { 202: runStatusAnswer, 400: errorBody, 401: errorBody, 404: errorBody, 409: errorBody },
      },
    },
    async (req, reply) => {
      const { tenantId } = principalOf(req);
      const run = await deps.db.transaction().execute((trx) =>
        requestUnwind(trx, {
          tenantId,
          runId: req.params.runId,
          reason: req.body.reason,
          schema: deps.schema,
        }),
      );
      req.log.info({ runId: run.run_id, reason: req.body.reason }, 'unwind requested');
      return reply.code(202).send({ runId: run.run_id, status: RunStatus.COMPENSATING });
    },
  );

  app.post(
    '/runs/:runId/complete',
    {
      schema: {
        summary: 'Finish a run forward',
        description: 'RUNNING → COMPLETED once every step is settled; otherwise 409 STEP_UNRESOLVED.',
        tags: ['runs'],
        security: [{ bearer: [] }],
        params: runIdParams,
        response: { 200: runStatusAnswer, 401: errorBody, 404: errorBody, 409: errorBody },
      },
    },
    async (req) => {
      const { tenantId } = principalOf(req);
      const run = await deps.db.transaction().execute((trx) => completeRun(trx, tenantId, req.params.runId));
      return { runId: run.run_id, status: run.status };
    },
  );
  return Promise.resolve();
};
