import { markOutcomesDelivered, type DeliveredOutcome, type SagaDb } from '@agent-saga/core';
import { createStatementGroup, type StatementGroup } from '@agent-saga/core';

/**
 * The delivered marks of concurrent responses, grouped: each response that carries a settled outcome
 * submits its step, and the marks (with the cursor moves they cause) of the responses ready at the same
 * time commit in one transaction (see `markOutcomesDelivered`). The response is sent only after
 * its mark committed, so the cursor never moves past an outcome the caller did not receive, and a caller
 * that got the answer finds the cursor moved.
 */
export type DeliveryGroup = StatementGroup<DeliveredOutcome, void>;

/** Why 64: more concurrent answers than the API holds at the bench's 50 in flight; one statement's text
 * stays a few kB. */
const MAX_GROUP = 64;

export function createDeliveryGroup(db: SagaDb): DeliveryGroup {
  return createStatementGroup({
    maxSize: MAX_GROUP,
    async run(items) {
      await markOutcomesDelivered(db, items);
      return items.map(() => undefined);
    },
  });
}
