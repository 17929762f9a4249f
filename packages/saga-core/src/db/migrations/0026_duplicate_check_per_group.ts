import { sql, type Kysely } from 'kysely';

/**
 * `saga_repeated_operations(run_ids, step_idxs, tools, args, identities, locked)`: the grouped intake's
 * duplicate check (`recordNewIntents`) for a whole group in one call, where `saga_earlier_operation`
 * (migration 0016) is called once per item.
 *
 * Why: every call of a PL/pgSQL function from the grouped statement pays for itself (its `SET` clauses
 * saved and restored, a snapshot, its query's executor started and ended) whatever the run holds: 16 calls
 * of 0016's function cost about 0.18 ms of Postgres CPU where one call of this one for 16 items costs
 * 0.03 ms (measured in `psql`, runs with no steps, 1,000 groups). It takes one snapshot and runs one query
 * for all the items it is given, each item's earlier rows read by the primary key's range as before.
 *
 * The snapshot is still fresh and still taken after the runs are locked: the function is VOLATILE
 * (PostgreSQL takes a new snapshot for each query of a volatile function under READ COMMITTED), and its
 * caller passes as `locked` a count of its whole locked-runs CTE, which Postgres must compute, so take every
 * run lock, before it calls the function (see "Concurrent duplicates" in core's
 * `find-duplicate-operation.ts`). `locked` is not otherwise used.
 *
 * It answers `(run_id, step_idx)` of each item (the arrays are parallel, one element per item) that
 * repeats a step of its run: the same tool, a status that may have taken effect (not FAILED, NOT_EXECUTED
 * or REJECTED), and arguments equal at every identity path (an absent value counts as null), or equal
 * whole when the item's identity is NULL. The rule is 0016's, spelled out again (a migration imports
 * nothing live); `find-duplicate-operation.test.ts` checks it against the live rule. Its settings are
 * 0016's as 0020 left them: the schema it was created in, the cached generic plan, no sequential scan.
 * 0016's function stays, unused, so that `down` leaves the schema as it was.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION saga_repeated_operations(p_run_ids text[], p_step_idxs int[], p_tools text[],
                                             p_args jsonb[], p_identities jsonb[], p_locked bigint)
      RETURNS TABLE (repeat_run_id text, repeat_step_idx int)
      LANGUAGE plpgsql VOLATILE ROWS 1
      SET search_path FROM CURRENT
      SET plan_cache_mode = force_generic_plan
      SET enable_seqscan = off AS $$
    BEGIN
      RETURN QUERY
        SELECT it.run_id, it.step_idx
          FROM unnest(p_run_ids, p_step_idxs, p_tools, p_args, p_identities)
                 AS it(run_id, step_idx, tool, args, identity)
         WHERE EXISTS (
           SELECT 1 FROM saga_log u
            WHERE u.run_id = it.run_id
              AND u.status NOT IN ('FAILED', 'NOT_EXECUTED', 'REJECTED')
              AND u.tool = it.tool
              AND CASE WHEN it.identity IS NULL THEN u.args = it.args
                  ELSE NOT EXISTS (SELECT 1 FROM jsonb_each(it.identity) AS idf(path, value)
                                    WHERE coalesce(u.args #> string_to_array(idf.path, '.'), 'null'::jsonb)
                                          <> idf.value) END);
    END $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION saga_repeated_operations(text[], int[], text[], jsonb[], jsonb[], bigint)`.execute(
    db,
  );
}
