import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { assertRunInScope, completeCheckedRun, requestUnwind, RunStatus, valuesOf } from '@agent-saga/core';
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
      const principal = principalOf(req);
      const { tenantId } = principal;
      // An own-runs token's view of another token's run: 404, before anything is written.
      await assertRunInScope(deps.db, principal, req.params.runId);
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
        description:
          'RUNNING → COMPLETED once every step is settled; otherwise 409 STEP_UNRESOLVED. A run bound to a ' +
          'definition with an invariant is first checked against the real systems: it fails → ' +
          'MANUAL_INTERVENTION with the failed clause in statusReason and a case; a vendor that cannot ' +
          'answer → 503 INVARIANT_UNVERIFIED, nothing moved (ask again later).',
        tags: ['runs'],
        security: [{ bearer: [] }],
        params: runIdParams,
        response: { 200: runStatusAnswer, 401: errorBody, 404: errorBody, 409: errorBody, 503: errorBody },
      },
    },
    async (req) => {
      const principal = principalOf(req);
      const { tenantId } = principal;
      await assertRunInScope(deps.db, principal, req.params.runId);
      // The invariant's lookups run before the ending transaction, never under the run's lock.
      const checker = deps.definitions
        ? { definitions: deps.definitions, lookups: deps.lookups ?? {}, logger: deps.logger }
        : undefined;
      const run = await completeCheckedRun(deps.db, tenantId, req.params.runId, checker);
      return { runId: run.run_id, status: run.status };
    },
  );
  return Promise.resolve();
};
