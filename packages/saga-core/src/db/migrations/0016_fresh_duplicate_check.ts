import { sql, type Kysely } from 'kysely';

/**
 * `saga_earlier_operation(run_id, tool, args, identity)`: the rule against replanned duplicates (core's
 * `steps/intent/find-duplicate-operation.ts`) as a VOLATILE function, for the grouped intake statement.
 *
 * Why a function: the grouped statement (`recordNewIntents`) is one autocommit statement, and a statement
 * reads every table from the snapshot it took when it started, before it waited for the run lock. An
 * intake of the same run that another statement committed while this one waited was invisible to its
 * duplicate check, so two identical new steps sent at once through two groups could both be written. A
 * VOLATILE function takes a fresh snapshot for each query it runs (PostgreSQL's rule for volatile
 * functions under READ COMMITTED): called with the locked run's id, after the lock is held, it sees every
 * intake committed before the lock was granted, as the intake transaction's separate read does. No row, no
 * index, no WAL: the fix costs one function call per item.
 *
 * The rule as it stood at this migration, spelled out (a migration imports nothing live): the earlier step
 * of the run, lowest index first, of the same tool, whose status may have taken effect (not FAILED,
 * NOT_EXECUTED or REJECTED), and whose arguments equal at every identity path (an absent value counts as
 * null), or are equal whole when `identity` is NULL; as the jsonb the refusal reports, or NULL.
 * `find-duplicate-operation.test.ts` checks this function and the live rule agree.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION saga_earlier_operation(p_run_id text, p_tool text, p_args jsonb, p_identity jsonb)
      RETURNS jsonb LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $$
    BEGIN
      RETURN (
        SELECT jsonb_build_object('stepIdx', u.step_idx, 'status', u.status,
                                  'idempotencyKey', u.idempotency_key,
                                  'externalRef', u.external_ref, 'result', u.result)
          FROM saga_log u
         WHERE u.run_id = p_run_id
           AND u.status NOT IN ('FAILED', 'NOT_EXECUTED', 'REJECTED')
           AND u.tool = p_tool
           AND CASE WHEN p_identity IS NULL THEN u.args = p_args
               ELSE NOT EXISTS (SELECT 1 FROM jsonb_each(p_identity) AS idf(path, value)
                                 WHERE coalesce(u.args #> string_to_array(idf.path, '.'), 'null'::jsonb)
                                       <> idf.value) END
         ORDER BY u.step_idx LIMIT 1);
    END $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION saga_earlier_operation(text, text, jsonb, jsonb)`.execute(db);
}
