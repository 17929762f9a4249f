import { preparedAs, type SagaDb, type StepRow } from '@agent-saga/core';
import { sql } from 'kysely';
import { createStatementGroup, type StatementGroup } from '@agent-saga/core';

/**
 * The reads of waiting requests that a NOTIFY woke, grouped: the requests woken at the same time read their
 * steps in one query (`WHERE idempotency_key = ANY($keys)`), one round trip and one (read-only) commit.
 * Resolves undefined for a key with no step.
 */
export type StepReadGroup = StatementGroup<string, StepRow | undefined>;

/** Why 64: more waiting requests than the API holds at the bench's 50 in flight. */
const MAX_GROUP = 64;

export function createStepReadGroup(db: SagaDb): StepReadGroup {
  return createStatementGroup({
    maxSize: MAX_GROUP,
    async run(keys) {
      const r = await sql<StepRow>`${preparedAs('saga_steps_by_keys')}
        SELECT * FROM saga_log WHERE idempotency_key = ANY(${[...new Set(keys)]}::text[])`.execute(db);
      const byKey = new Map(r.rows.map((row) => [row.idempotency_key, row]));
      return keys.map((k) => byKey.get(k));
    },
  });
}
