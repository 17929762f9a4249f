import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { readPolicyFloor, setPolicyFloor, type TenantPolicyFloor } from '@agent-saga/core';
import type { ApiDeps } from '../api-deps.js';
import { operatorOf } from '../auth.js';
import { errorBody, policyFloorBody, policyFloorView, type PolicyFloorView } from '../schemas.js';

/** What an agent token is told it may not do here (403). */
const POLICY_REFUSAL = "read or change the tenant's policy floor";

/**
 * The tenant's policy floor (operator tokens only, reads included: an agent must not tune its run's
 * requests to the floor, and it reads what applies to its own run in the run view). Every run the tenant
 * creates from then on gets the stricter of the floor and what it asks for, field by field (core's
 * `applyPolicyFloor`); a run already created keeps the policy it was created with.
 */
export const tenantPolicyRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = (app, { deps }) => {
  app.get(
    '/policy',
    {
      schema: {
        summary: "The tenant's policy floor: the least every new run's policy and budget must be",
        tags: ['policy'],
        security: [{ bearer: [] }],
        response: {
          200: policyFloorView,
          401: errorBody,
          403: errorBody.describe('FORBIDDEN: an agent token'),
        },
      },
    },
    async (req) => present((await readPolicyFloor(deps.db, operatorOf(req, POLICY_REFUSAL).tenantId)).floor),
  );

  app.put(
    '/policy',
    {
      schema: {
        summary: "Set the tenant's policy floor (operator tokens only)",
        description:
          'Each part named (`policy`, `budget`) replaces the stored part whole (`{ "policy": {} }` clears ' +
          'it); a part not named is kept. A new run may tighten the floor and never loosen it: a run asking ' +
          'for less gets the floor, and its view shows the policy that applies. Booleans (`requirePivot`, ' +
          '`unwindOnFailure`, `approveDeletions`): true in the floor wins. `approveMoneyAbove`, ' +
          '`authorityTtlMs` and every budget ceiling: the lower wins, per currency for amounts (a currency ' +
          "only the floor names takes the floor's). With `ifVersion` the change is a compare-and-set.",
        tags: ['policy'],
        security: [{ bearer: [] }],
        body: policyFloorBody,
        response: {
          200: policyFloorView,
          400: errorBody.describe('BAD_REQUEST naming the field (`policy.approveMoneyAbove.USD`)'),
          401: errorBody,
          403: errorBody.describe('FORBIDDEN: an agent token'),
          409: errorBody.describe(
            'POLICY_VERSION_MISMATCH: the floor is no longer at `ifVersion` (`version`: the current one)',
          ),
        },
      },
    },
    async (req) => {
      const op = operatorOf(req, POLICY_REFUSAL);
      const floor = await setPolicyFloor(deps.db, {
        tenantId: op.tenantId,
        policy: req.body.policy,
        budget: req.body.budget,
        ifVersion: req.body.ifVersion,
        actor: op.actor,
        tokenId: op.tokenId,
      });
      // Which parts changed and who changed them; the values are the tenant's settings, not personal
      // data, but the log names fields only, as the run view shows the values.
      req.log.info(
        {
          version: floor.version,
          policyFields: Object.keys(floor.policy),
          budgetFields: Object.keys(floor.budget),
          actor: op.actor,
        },
        'policy floor set',
      );
      return present(floor);
    },
  );
  return Promise.resolve();
};

function present(f: TenantPolicyFloor): PolicyFloorView {
  return {
    policy: f.policy,
    budget: f.budget,
    version: f.version,
    updatedAt: f.updatedAt?.toISOString() ?? null,
    updatedBy: f.updatedBy,
    updatedByTokenId: f.updatedByToken,
  };
}
