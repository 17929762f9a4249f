import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { approvalQueue, decideApproval, getApproval, listSteps, stepsOfRuns } from '@agent-saga/core';
import type { ApiDeps } from '../api-deps.js';
import { operatorOf } from '../auth.js';
import { presentApproval } from '../present-review.js';
import { approvalIdParams, approvalsQuery, approvalView, decisionBody, errorBody } from '../schemas.js';

/**
 * Approvals: the inbox and the decision (operator tokens only: an agent token is 403 FORBIDDEN), for
 * every kind (`ApprovalKind`): a pivot, a held step, a held compensation (money or a deletion in an
 * unwind) and a renewal of a run's lapsed authority (its recovery plan and the plan's hash in the
 * evidence). A decision carries the hash of the proposal the person saw; see `decideApproval` for every
 * refusal and for what each kind's decision does.
 */
export const approvalRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = (app, { deps }) => {
  app.get(
    '/approvals',
    {
      schema: {
        summary:
          "The tenant's approvals of every kind (pivot, step, compensation, renewal), soonest deadline first",
        tags: ['approvals'],
        security: [{ bearer: [] }],
        querystring: approvalsQuery,
        response: {
          200: z.object({ approvals: z.array(approvalView) }),
          400: errorBody,
          401: errorBody,
          403: errorBody,
        },
      },
    },
    async (req) => {
      const rows = await approvalQueue(deps.db, { tenantId: operatorOf(req).tenantId, ...req.query });
      const steps = await stepsOfRuns(
        deps.db,
        rows.map((a) => a.run_id),
      );
      return {
        approvals: rows.map((a) =>
          presentApproval(
            a,
            steps.filter((s) => s.run_id === a.run_id),
            deps.registry,
          ),
        ),
      };
    },
  );

  app.get(
    '/approvals/:id',
    {
      schema: {
        summary: 'One approval: the complete proposal, its hash, deadline and evidence',
        tags: ['approvals'],
        security: [{ bearer: [] }],
        params: approvalIdParams,
        response: { 200: approvalView, 401: errorBody, 403: errorBody, 404: errorBody },
      },
    },
    async (req) => {
      const a = await getApproval(deps.db, operatorOf(req).tenantId, req.params.id);
      return presentApproval(a, await listSteps(deps.db, a.run_id), deps.registry);
    },
  );

  app.post(
    '/approvals/:id/decision',
    {
      schema: {
        summary: 'Approve or reject a proposal (operator tokens only)',
        description:
          'The decision must carry the hash of the proposal as the operator saw it. Refusals: a stale hash ' +
          '409 APPROVAL_HASH_MISMATCH, a second decision 409 APPROVAL_DECIDED, an approval whose run no ' +
          'longer waits for it (unwound, or ended) 409 RUN_NOT_RUNNING (nothing is decided or sent; an ' +
          'unwind withdraws every pending approval of its run: superseded, with the reason as comment), ' +
          'past the deadline 410 APPROVAL_EXPIRED, an agent token 403 FORBIDDEN, another tenant 404. ' +
          'By kind: an approved pivot runs its commit steps; a held step is sent; a held compensation is ' +
          'sent once under its own key (rejected: never sent, a case opens); a renewal renews the run ' +
          'authority and its recovery plan goes on (rejected: the run ends MANUAL_INTERVENTION with a case). ' +
          "Every approval approved renews the run's authority (`authorityTtlMs` counts from it).",
        tags: ['approvals'],
        security: [{ bearer: [] }],
        params: approvalIdParams,
        body: decisionBody,
        response: {
          200: approvalView,
          400: errorBody,
          401: errorBody,
          403: errorBody,
          404: errorBody,
          409: errorBody.describe(
            'APPROVAL_HASH_MISMATCH (stale hash), APPROVAL_DECIDED (decided or superseded), ' +
              'RUN_NOT_RUNNING (the run no longer waits for this approval: unwound or ended; `runStatus` says how)',
          ),
          410: errorBody,
        },
      },
    },
    async (req) => {
      const op = operatorOf(req);
      const result = await deps.db.transaction().execute((trx) =>
        decideApproval(trx, {
          tenantId: op.tenantId,
          approvalId: req.params.id,
          decision: req.body.decision,
          hash: req.body.hash,
          comment: req.body.comment ?? null,
          actor: op.actor,
          tokenId: op.tokenId,
          schema: deps.schema,
        }),
      );
      if (result.kind === 'expired') throw result.error;
      req.log.info(
        {
          approvalId: result.approval.id,
          runId: result.approval.run_id,
          decision: req.body.decision,
          actor: op.actor,
        },
        'approval decided',
      );
      return presentApproval(
        result.approval,
        await listSteps(deps.db, result.approval.run_id),
        deps.registry,
      );
    },
  );
  return Promise.resolve();
};
