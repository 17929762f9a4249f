import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { caseQueue, resolveCase, stepsOfRuns } from '@agent-saga/core';
import type { ApiDeps } from '../api-deps.js';
import { operatorOf } from '../auth.js';
import { presentCase } from '../present-review.js';
import { caseIdParams, caseResolveBody, casesQuery, caseView, errorBody } from '../schemas.js';

/** The operator queue: manual-intervention cases with their evidence, and a person's action on each. */
export const caseRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = (app, { deps }) => {
  app.get(
    '/cases',
    {
      schema: {
        summary: "The tenant's manual-intervention cases, oldest first, with their evidence",
        tags: ['operator'],
        security: [{ bearer: [] }],
        querystring: casesQuery,
        response: {
          200: z.object({ cases: z.array(caseView) }),
          400: errorBody,
          401: errorBody,
          403: errorBody,
        },
      },
    },
    async (req) => {
      const rows = await caseQueue(deps.db, { tenantId: operatorOf(req).tenantId, ...req.query });
      const steps = await stepsOfRuns(
        deps.db,
        rows.map((c) => c.run_id),
      );
      return {
        cases: rows.map((c) =>
          presentCase(
            c,
            steps.filter((s) => s.run_id === c.run_id),
            deps.registry,
          ),
        ),
      };
    },
  );

  app.post(
    '/cases/:id/resolve',
    {
      schema: {
        summary: 'Resolve a case (operator tokens only)',
        description:
          '`confirmed` (with `externalRef`) or `not_executed` settle a step whose outcome is unknown; the run ' +
          'goes on from there (a not-executed step is sent again with its key). `retry_compensation` gives a ' +
          "compensation a fresh attempt budget. `resolve_run` closes the run's cases. A resolved case: 409.",
        tags: ['operator'],
        security: [{ bearer: [] }],
        params: caseIdParams,
        body: caseResolveBody,
        response: {
          200: caseView,
          400: errorBody,
          401: errorBody,
          403: errorBody,
          404: errorBody,
          409: errorBody,
        },
      },
    },
    async (req) => {
      const op = operatorOf(req);
      const row = await deps.db.transaction().execute((trx) =>
        resolveCase(trx, {
          tenantId: op.tenantId,
          caseId: req.params.id,
          action: req.body.action,
          externalRef: req.body.externalRef,
          comment: req.body.comment,
          actor: op.actor,
          tokenId: op.tokenId,
          schema: deps.schema,
        }),
      );
      req.log.info({ caseId: req.params.id, action: req.body.action, actor: op.actor }, 'case resolved');
      return presentCase(row, await stepsOfRuns(deps.db, [row.run_id]), deps.registry);
    },
  );
  return Promise.resolve();
};
