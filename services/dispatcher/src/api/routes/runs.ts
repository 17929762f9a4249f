import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  bindRun,
  createRun,
  UNBOUND_RUN,
  getRun,
  listApprovals,
  listCases,
  listCorrections,
  listRuns,
  listStepEvents,
  listSteps,
  readStepDecisions,
} from '@agent-saga/core';
import { RunIdTakenError } from '../api-errors.js';
import type { ApiDeps } from '../api-deps.js';
import { principalOf } from '../auth.js';
import { presentEvent, presentRun } from '../present-step.js';
import {
  createRunBody,
  errorBody,
  runCreated,
  runEvents,
  runIdParams,
  runList,
  runsQuery,
  runView,
} from '../schemas.js';

/** Runs: create (idempotent per tenant), list, read with all steps and review items, read every event. */
export const runRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = (app, { deps }) => {
  app.post(
    '/runs',
    {
      schema: {
        summary: 'Create a run',
        description:
          'Creating a run id the tenant already has is idempotent (200: the existing run, unchanged). Step ' +
          'indices start at 0. A run may be bound to a saga definition (`definition`), whose budget and ' +
          "policy defaults lie under the run's own; a `plan` is checked against the definition and stored " +
          'with its hash. A run with a definition, a plan, a budget or `policy.approveMoneyAbove` is ' +
          'governed: its calls are matched to the definition, held to the plan and budget.',
        tags: ['runs'],
        security: [{ bearer: [] }],
        body: createRunBody,
        response: {
          200: runCreated,
          201: runCreated,
          400: errorBody.describe(
            'BAD_REQUEST (the body failed its schema: `field`), UNKNOWN_DEFINITION (`field`: ' +
              '`definition.name` or `definition.version`), PLAN_INVALID (the plan does not fit the ' +
              'definition: `field` names the entry, `plan[2].step`, `plan[3].args.amount`)',
          ),
          401: errorBody,
          409: errorBody.describe('RUN_ID_TAKEN'),
        },
      },
    },
    async (req, reply) => {
      const { tenantId } = principalOf(req);
      const runId = req.body?.runId ?? `run_${randomUUID()}`;
      // Every refusal of the binding (definition, plan) is thrown here, before anything is written.
      const binding = req.body ? bindRun(deps.definitions, req.body) : UNBOUND_RUN;
      const r = await createRun(deps.db, {
        runId,
        tenantId,
        metadata: req.body?.metadata ?? {},
        binding,
      });
      if ('taken' in r) throw new RunIdTakenError(runId);
      if (r.created) req.log.info({ runId }, 'run created');
      return reply.code(r.created ? 201 : 200).send({ runId: r.run.run_id, status: r.run.status });
    },
  );

  app.get(
    '/runs',
    {
      schema: {
        summary: "The tenant's runs, newest first, with counts of what waits for a person",
        tags: ['runs'],
        security: [{ bearer: [] }],
        querystring: runsQuery,
        response: { 200: runList, 400: errorBody, 401: errorBody },
      },
    },
    async (req) => {
      const rows = await listRuns(deps.db, {
        tenantId: principalOf(req).tenantId,
        status: req.query.status,
        limit: req.query.limit,
      });
      return {
        runs: rows.map((r) => ({
          runId: r.run_id,
          status: r.status,
          statusReason: r.status_reason,
          steps: r.steps,
          pendingApprovals: r.pending_approvals,
          openCases: r.open_cases,
          openCorrections: r.open_corrections,
          createdAt: r.created_at.toISOString(),
          updatedAt: r.updated_at.toISOString(),
        })),
      };
    },
  );

  app.get(
    '/runs/:runId',
    {
      schema: {
        summary: 'A run and all its steps, from the saga log',
        tags: ['runs'],
        security: [{ bearer: [] }],
        params: runIdParams,
        response: { 200: runView, 401: errorBody, 404: errorBody },
      },
    },
    async (req) => {
      const run = await getRun(deps.db, principalOf(req).tenantId, req.params.runId);
      const [steps, approvals, corrections, cases, decisions] = await Promise.all([
        listSteps(deps.db, run.run_id),
        listApprovals(deps.db, run.run_id),
        listCorrections(deps.db, run.run_id),
        listCases(deps.db, run.run_id),
        readStepDecisions(deps.db, run.run_id),
      ]);
      return presentRun(
        run,
        steps,
        deps.registry,
        { approvals, corrections, cases },
        deps.definitions,
        decisions,
      );
    },
  );

  app.get(
    '/runs/:runId/events',
    {
      schema: {
        summary: 'Every transition, attempt, retry and lookup of a run, in order',
        tags: ['runs'],
        security: [{ bearer: [] }],
        params: runIdParams,
        response: { 200: runEvents, 401: errorBody, 404: errorBody },
      },
    },
    async (req) => {
      const run = await getRun(deps.db, principalOf(req).tenantId, req.params.runId);
      const [steps, events] = await Promise.all([
        listSteps(deps.db, run.run_id),
        listStepEvents(deps.db, run.run_id),
      ]);
      const toolAt = new Map(steps.map((s) => [s.step_idx, s.tool]));
      return {
        runId: run.run_id,
        events: events.map((e) => presentEvent(e, (i) => toolAt.get(i), deps.registry)),
      };
    },
  );
  return Promise.resolve();
};
