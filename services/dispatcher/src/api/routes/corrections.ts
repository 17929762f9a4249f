import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { correctionQueue, stepsOfRuns } from '@agent-saga/core';
import type { ApiDeps } from '../api-deps.js';
import { operatorOf } from '../auth.js';
import { presentCorrection } from '../present-review.js';
import {
  correctionDismissBody,
  correctionEditBody,
  correctionIdParams,
  correctionSendBody,
  correctionsQuery,
  correctionView,
  errorBody,
} from '../schemas.js';
import { dismissCorrection, editCorrection, sendCorrection } from '../send-correction.js';

const decisionResponses = {
  200: correctionView,
  400: errorBody,
  401: errorBody,
  403: errorBody,
  404: errorBody,
  409: errorBody,
} as const;

/**
 * The corrections queue, ranked by audience (customer-facing last). Only an operator sends, edits or
 * dismisses; a send carries the hash of the message the operator read.
 */
export const correctionRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = (app, { deps }) => {
  const present = async (row: Parameters<typeof presentCorrection>[0]) =>
    presentCorrection(row, await stepsOfRuns(deps.db, [row.run_id]));

  app.get(
    '/corrections',
    {
      schema: {
        summary: "The tenant's corrections, internal audiences first, customer-facing last",
        tags: ['operator'],
        security: [{ bearer: [] }],
        querystring: correctionsQuery,
        response: {
          200: z.object({ corrections: z.array(correctionView) }),
          400: errorBody,
          401: errorBody,
          403: errorBody,
        },
      },
    },
    async (req) => {
      const rows = await correctionQueue(deps.db, { tenantId: operatorOf(req).tenantId, ...req.query });
      const steps = await stepsOfRuns(
        deps.db,
        rows.map((c) => c.run_id),
      );
      return {
        corrections: rows.map((c) =>
          presentCorrection(
            c,
            steps.filter((s) => s.run_id === c.run_id),
          ),
        ),
      };
    },
  );

  app.post(
    '/corrections/:id/send',
    {
      schema: {
        summary: 'Send a reviewed correction (operator tokens only)',
        description:
          'The correction becomes `sending` (its key fixed and a lease taken, in one transaction) before the ' +
          'call. A vendor refusal answers 422 CORRECTION_REFUSED (nothing sent; it is open again); an unknown ' +
          'outcome 502 CORRECTION_OUTCOME_UNKNOWN (it is `unknown` until the email lookup by its key settles ' +
          'it; sending again settles it first: found, nothing is sent; proven absent, the same key is sent). ' +
          'A send under way, or unknown and not yet provable, answers 409 CORRECTION_SENDING.',
        tags: ['operator'],
        security: [{ bearer: [] }],
        params: correctionIdParams,
        body: correctionSendBody,
        response: { ...decisionResponses, 422: errorBody, 502: errorBody },
      },
    },
    async (req) => {
      const op = operatorOf(req);
      return present(await sendCorrection(deps, req.params.id, op, req.body));
    },
  );

  app.post(
    '/corrections/:id/edit',
    {
      schema: {
        summary:
          "Edit a correction's template variables: a new proposal with a new hash (operator tokens only)",
        description:
          'A new version of the message, sent (if ever) under its own key. Refused with 409 ' +
          'CORRECTION_SENDING while a send is under way or its outcome unknown.',
        tags: ['operator'],
        security: [{ bearer: [] }],
        params: correctionIdParams,
        body: correctionEditBody,
        response: decisionResponses,
      },
    },
    async (req) => present(await editCorrection(deps.db, req.params.id, operatorOf(req), req.body)),
  );

  app.post(
    '/corrections/:id/dismiss',
    {
      schema: {
        summary: 'Dismiss a correction: no message is sent (operator tokens only)',
        description: 'Refused with 409 CORRECTION_SENDING while a send is under way or its outcome unknown.',
        tags: ['operator'],
        security: [{ bearer: [] }],
        params: correctionIdParams,
        body: correctionDismissBody,
        response: decisionResponses,
      },
    },
    async (req) => present(await dismissCorrection(deps.db, req.params.id, operatorOf(req), req.body)),
  );
  return Promise.resolve();
};
