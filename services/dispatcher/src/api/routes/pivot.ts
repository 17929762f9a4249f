import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { assertRunInScope, RunStatus, stagePivot } from '@agent-saga/core';
import type { ApiDeps } from '../api-deps.js';
import { principalOf } from '../auth.js';
import { errorBody, pivotAnswer, pivotBody, runIdParams } from '../schemas.js';
import { parsePivotCommit } from '../stage-pivot.js';

/** The pivot: one proposal of every commit step, for one person's approval. Agent or operator tokens. */
export const pivotRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = (app, { deps }) => {
  app.post(
    '/runs/:runId/pivot',
    {
      schema: {
        summary: 'Propose the pivot: the commit steps to run after one human approval',
        description:
          'Stages every commit step (AWAITING_APPROVAL, with its key and exact arguments) under one approval ' +
          'whose hash binds them, and moves the run to AWAITING_APPROVAL. Every earlier step must be settled. ' +
          'A new pivot while one is pending supersedes it. After approval the commit steps run in order and the ' +
          'run completes by itself; a rejected or expired pivot unwinds the run.',
        tags: ['approvals'],
        security: [{ bearer: [] }],
        params: runIdParams,
        body: pivotBody,
        response: {
          202: pivotAnswer,
          400: errorBody,
          401: errorBody,
          404: errorBody,
          409: errorBody.describe(
            'RUN_NOT_RUNNING, STEP_UNRESOLVED (an earlier step is not settled), PIVOT_STAGED; on a governed ' +
              'run, as for a call: NOT_IN_DEFINITION (a commit step the definition does not allow), ' +
              "PLAN_MISMATCH (identity arguments other than the plan's), BUDGET_EXCEEDED",
          ),
        },
      },
    },
    async (req, reply) => {
      const p = principalOf(req);
      const commit = parsePivotCommit(deps.registry, req.body.commit);
      // An own-runs token's view of another token's run: 404 as for an absent run, before anything is written.
      await assertRunInScope(deps.db, p, req.params.runId);
      const { approval } = await deps.db.transaction().execute((trx) =>
        stagePivot(trx, {
          tenantId: p.tenantId,
          runId: req.params.runId,
          commit,
          summary: req.body.summary,
          actor: p.actor,
          tokenId: p.tokenId,
          registry: deps.registry,
          definitions: deps.definitions,
          schema: deps.schema,
          approvalTtlMs: deps.config.APPROVAL_TTL_MS,
          log: deps.logger.child({ runId: req.params.runId }),
        }),
      );
      req.log.info(
        { runId: req.params.runId, approvalId: approval.id, steps: approval.steps },
        'pivot proposed',
      );
      return reply.code(202).send({
        runId: approval.run_id,
        status: RunStatus.AWAITING_APPROVAL,
        approvalId: approval.id,
        hash: approval.hash,
        expiresAt: approval.expires_at.toISOString(),
      });
    },
  );
  return Promise.resolve();
};
