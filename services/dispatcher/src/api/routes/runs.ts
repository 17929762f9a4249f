import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  bindRunUnderFloor,
  createRun,
  getRunFor,
  listApprovals,
  listCases,
  listCorrections,
  listRuns,
  OPEN_RUN_STATUSES,
  readRunCursor,
  readStepDecisions,
  type ApprovalRow,
  type CaseRow,
  type CorrectionRow,
} from '@agent-saga/core';
import { RunIdTakenError } from '../api-errors.js';
import type { ApiDeps } from '../api-deps.js';
import { principalOf } from '../auth.js';
import { awaitRunStatus, awaitStepOutcome } from '../await-read.js';
import { presentEvent, presentRun, presentStep } from '../present-step.js';
import type { SettleWaiter } from '../settle-waiter.js';
import { readEventsPage, readStepsAt, readStepsPage, readStepTools } from '../read-run-pages.js';
import {
  createRunBody,
  errorBody,
  EVENTS_PAGE_DEFAULT,
  EVENTS_PAGE_MAX,
  runCreated,
  runEvents,
  runEventsQuery,
  runIdParams,
  runList,
  runsQuery,
  runViewPage,
  runViewQuery,
  stepParams,
  stepView,
  stepViewQuery,
  STEPS_PAGE_MAX,
} from '../schemas.js';

/**
 * Runs: create (idempotent per tenant), list, read with its steps (paged, see `read-run-pages.ts`) and
 * review items, read one step, read its events (paged). The reads of a run and of a step may wait for a
 * change (`waitMs`, see `await-read.ts`).
 */
export const runRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps; waiter: SettleWaiter }> = (
  app,
  { deps, waiter },
) => {
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
      const principal = principalOf(req);
      const runId = req.body?.runId ?? `run_${randomUUID()}`;
      // Every refusal of the binding (definition, plan) is thrown here, before anything is written; the
      // tenant's policy floor is applied over it (a run may tighten the floor, never loosen it).
      const binding = await bindRunUnderFloor(deps.db, deps.definitions, principal.tenantId, req.body);
      const r = await createRun(deps.db, {
        runId,
        tenantId: principal.tenantId,
        metadata: req.body?.metadata ?? {},
        binding,
        // `runs.created_by_token`, what an own-runs token's every run route checks (`getRunFor`).
        creator: principal,
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
        description:
          'An own-runs token (`agent-saga tokens create --scope own-runs`) lists only the runs it created; ' +
          'every run route answers any other run of the tenant 404 NOT_FOUND, as if it were absent.',
        tags: ['runs'],
        security: [{ bearer: [] }],
        querystring: runsQuery,
        response: { 200: runList, 400: errorBody, 401: errorBody },
      },
    },
    async (req) => {
      const rows = await listRuns(deps.db, {
        access: principalOf(req),
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
        summary: 'A run and its steps, from the saga log',
        description:
          `The steps come in index order, at most \`stepsLimit\` (default and at most ${STEPS_PAGE_MAX}, ` +
          'the default cap on steps per run, so a run under it is complete in one answer). When more ' +
          'follow, `nextStepsCursor` is the last index shown: pass it as `stepsAfter` for the next page ' +
          '(keyset on the step index). Approvals, cases and corrections are always all of them. With ' +
          '`waitMs` the answer waits while the run is in one of `whileStatus` (default: until it ends), and ' +
          'comes as soon as its status moves or the time is up.',
        tags: ['runs'],
        security: [{ bearer: [] }],
        params: runIdParams,
        querystring: runViewQuery,
        response: { 200: runViewPage, 400: errorBody, 401: errorBody, 404: errorBody },
      },
    },
    async (req) => {
      const { waitMs, whileStatus } = req.query;
      const run = await awaitRunStatus(
        deps.db,
        waiter,
        principalOf(req),
        req.params.runId,
        new Set(whileStatus === undefined ? OPEN_RUN_STATUSES : [whileStatus].flat()),
        waitMs,
      );
      const [cursor, page, approvals, corrections, cases, decisions] = await Promise.all([
        readRunCursor(deps.db, run.run_id),
        readStepsPage(deps.db, run.run_id, { after: req.query.stepsAfter, limit: req.query.stepsLimit }),
        listApprovals(deps.db, run.run_id),
        listCorrections(deps.db, run.run_id),
        listCases(deps.db, run.run_id),
        readStepDecisions(deps.db, run.run_id),
      ]);
      // The review items are shown with their steps' tools and arguments even when those steps are on
      // another page: they are read too, presented, and left out of `steps`.
      const shown = new Set(page.rows.map((s) => s.step_idx));
      const elsewhere = reviewedSteps(approvals, corrections, cases).filter((i) => !shown.has(i));
      const others = await readStepsAt(deps.db, run.run_id, elsewhere);
      const view = presentRun(
        { ...run, cursor: cursor ?? run.cursor_floor },
        others.length === 0 ? page.rows : [...page.rows, ...others],
        deps.registry,
        { approvals, corrections, cases },
        deps.definitions,
        decisions,
        principalOf(req).role,
      );
      return {
        ...view,
        steps: others.length === 0 ? view.steps : view.steps.filter((s) => shown.has(s.stepIdx)),
        nextStepsCursor: page.nextCursor,
      };
    },
  );

  app.get(
    '/runs/:runId/steps/:stepIdx',
    {
      schema: {
        summary: 'One step of a run, from the saga log; may wait for its outcome',
        description:
          'The step as `GET /v1/runs/{runId}` shows it. With `waitMs` the answer waits while the step is ' +
          'open (held for a person, sent, unknown, or proved absent and to be sent again) and its run goes ' +
          'forward, and comes as soon as its outcome is in or the time is up. Unlike a call repeated at ' +
          'its index, it never sends anything.',
        tags: ['runs'],
        security: [{ bearer: [] }],
        params: stepParams,
        querystring: stepViewQuery,
        response: { 200: stepView, 400: errorBody, 401: errorBody, 404: errorBody },
      },
    },
    async (req) => {
      const principal = principalOf(req);
      const { step } = await awaitStepOutcome(
        deps.db,
        waiter,
        principal,
        req.params.runId,
        req.params.stepIdx,
        req.query.waitMs,
      );
      const decisions = await readStepDecisions(deps.db, step.run_id, step.step_idx);
      return presentStep(step, deps.registry, principal.role, decisions.get(step.step_idx) ?? null);
    },
  );

  app.get(
    '/runs/:runId/events',
    {
      schema: {
        summary: 'The transitions, attempts, retries and lookups of a run, in order, a page at a time',
        description:
          `At most \`limit\` events (default ${EVENTS_PAGE_DEFAULT}, at most ${EVENTS_PAGE_MAX}), oldest ` +
          'first. When more follow, `nextCursor` is the last event id shown: pass it as `after` for the ' +
          'next page (keyset on the event id, the order events were written); null on the last page.',
        tags: ['runs'],
        security: [{ bearer: [] }],
        params: runIdParams,
        querystring: runEventsQuery,
        response: { 200: runEvents, 400: errorBody, 401: errorBody, 404: errorBody },
      },
    },
    async (req) => {
      const run = await getRunFor(deps.db, principalOf(req), req.params.runId);
      const page = await readEventsPage(deps.db, run.run_id, {
        after: req.query.after,
        limit: req.query.limit,
      });
      const indices = [...new Set(page.rows.flatMap((e) => (e.step_idx === null ? [] : [e.step_idx])))];
      const toolAt = await readStepTools(deps.db, run.run_id, indices);
      return {
        runId: run.run_id,
        events: page.rows.map((e) =>
          presentEvent(e, (i) => toolAt.get(i), deps.registry, principalOf(req).role),
        ),
        nextCursor: page.nextCursor,
      };
    },
  );
  return Promise.resolve();
};

/** The step indices the run's approvals, corrections and cases name. */
function reviewedSteps(
  approvals: readonly ApprovalRow[],
  corrections: readonly CorrectionRow[],
  cases: readonly CaseRow[],
): number[] {
  const indices = new Set<number>();
  for (const a of approvals) for (const i of a.steps) indices.add(i);
  for (const c of corrections) indices.add(c.step_idx);
  for (const c of cases) if (c.step_idx !== null) indices.add(c.step_idx);
  return [...indices];
}
