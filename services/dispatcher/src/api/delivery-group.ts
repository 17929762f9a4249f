import { markOutcomesDelivered, type DeliveredOutcome, type SagaDb, type StepRow } from '@agent-saga/core';
import { createStatementGroup, type StatementGroup } from '@agent-saga/core';

/**
 * The reads of answers, each of which delivers what it reads: a request reads its step through this group
 * once it may answer (a NOTIFY woke it, or its wait began or ended), and a step the read finds settled and not
 * yet delivered is marked delivered, with the cursor moves it causes, in the same statement and commit (see
 * `markOutcomesDelivered`); a step still on its way is only read. The requests ready at the same time share
 * one statement. The response is sent only after its mark committed, so the cursor never moves past an
 * outcome the caller did not receive, and a caller that got the answer finds the cursor moved. Resolves
 * each item's step as it then is (undefined when the tenant has no such step).
 */
export type DeliveryGroup = StatementGroup<DeliveredOutcome, StepRow | undefined>;

/** Why 64: more concurrent answers than the API holds at the bench's 50 in flight; the statement binds three
 * arrays whatever the group's size, so its text (and its prepared plan) never changes. */
const MAX_GROUP = 64;

export function createDeliveryGroup(db: SagaDb): DeliveryGroup {
  return createStatementGroup({ maxSize: MAX_GROUP, run: (items) => markOutcomesDelivered(db, items) });
}
