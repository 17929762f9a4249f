import type { SagaDb } from '../db/connect.js';
import { applyPolicyFloor } from './apply-policy-floor.js';
import { bindRun, UNBOUND_RUN, type RunBinding, type RunBindingRequest } from './bind-run.js';
import { readPolicyFloor } from './read-policy-floor.js';
import type { SagaRegistry } from './saga-registry.js';

/**
 * The binding of a tenant's new run, as `POST /v1/runs` stores it: {@link bindRun} (the definition's
 * defaults with the run's own fields on top; every refusal thrown first, before anything is read or
 * written), then the tenant's policy floor over it ({@link applyPolicyFloor}: a run asking for less than
 * the floor gets the floor, and is not refused). A run created without a body (`req` undefined) is the
 * unbound run under the floor: every way a run comes to exist through the API takes the floor.
 *
 * `floor` is set on the binding whenever the tenant has a floor (its version, and the fields it decided,
 * possibly none), so the run's creation event records which floor the run was created under.
 */
export async function bindRunUnderFloor(
  db: SagaDb,
  definitions: SagaRegistry | undefined,
  tenantId: string,
  req: RunBindingRequest | undefined,
): Promise<RunBinding> {
  const bound = req ? bindRun(definitions, req) : UNBOUND_RUN;
  const { floor, now } = await readPolicyFloor(db, tenantId);
  if (floor.version === 0) return bound;
  const { binding, fields } = applyPolicyFloor(bound, floor, now);
  return { ...binding, floor: { version: floor.version, fields } };
}
