import { sql, type Kysely } from 'kysely';

/**
 * Token lifecycle and least privilege (issue 14).
 *
 * - `api_tokens.id`: a stable id (`tok_` + 24 hex) that names a token in `tokens list|revoke|rotate` and on
 *   every decision; rotation changes `token_hash`, never `id`. Existing rows get one each.
 * - `expires_at` (null: never), `last_used_at` (updated at most once a minute), `rotated_at`.
 * - `scope`: `tenant` (every run of the tenant, as before) or `own-runs` (only the runs the token created).
 * - Labels unique per tenant, among all tokens, revoked included: a label names one token for ever, so a
 *   decision's label is never ambiguous (rotate keeps a label; a new token needs a new one). Old rows may
 *   hold duplicates: the oldest keeps its label, every later duplicate is renamed `<label> (<id>)`, which is
 *   unique because the id is. Decisions recorded before this migration name the old label, as they did.
 * - `runs.created_by_token`: the id of the token that created the run (null for older runs and for runs
 *   created outside the API): what `own-runs` checks.
 * - `approvals.decided_by_token`, `corrections.decided_by_token`, `cases.resolved_by_token`: the id of the
 *   token that decided, beside the label already recorded in `decided_by` / `resolved_by`.
 *
 * The scope list is spelled out as it stands here (a migration imports nothing live).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE api_tokens
      ADD COLUMN id text NOT NULL DEFAULT ('tok_' || substr(md5(random()::text || clock_timestamp()::text), 1, 24)),
      ADD COLUMN scope text NOT NULL DEFAULT 'tenant' CHECK (scope IN ('tenant', 'own-runs')),
      ADD COLUMN expires_at timestamptz,
      ADD COLUMN last_used_at timestamptz,
      ADD COLUMN rotated_at timestamptz`.execute(db);
  await sql`CREATE UNIQUE INDEX api_tokens_id ON api_tokens (id)`.execute(db);
  await sql`
    UPDATE api_tokens t SET label = t.label || ' (' || t.id || ')'
      FROM (SELECT token_hash,
                   row_number() OVER (PARTITION BY tenant_id, label ORDER BY created_at, id) AS n
              FROM api_tokens WHERE label IS NOT NULL) d
     WHERE d.token_hash = t.token_hash AND d.n > 1`.execute(db);
  // So a label names one token of its tenant; tokens without a label are not constrained.
  await sql`CREATE UNIQUE INDEX api_tokens_tenant_label ON api_tokens (tenant_id, label) WHERE label IS NOT NULL`.execute(
    db,
  );
  await sql`ALTER TABLE runs ADD COLUMN created_by_token text`.execute(db);
  await sql`ALTER TABLE approvals ADD COLUMN decided_by_token text`.execute(db);
  await sql`ALTER TABLE corrections ADD COLUMN decided_by_token text`.execute(db);
  await sql`ALTER TABLE cases ADD COLUMN resolved_by_token text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE cases DROP COLUMN resolved_by_token`.execute(db);
  await sql`ALTER TABLE corrections DROP COLUMN decided_by_token`.execute(db);
  await sql`ALTER TABLE approvals DROP COLUMN decided_by_token`.execute(db);
  await sql`ALTER TABLE runs DROP COLUMN created_by_token`.execute(db);
  await sql`DROP INDEX api_tokens_tenant_label`.execute(db);
  await sql`DROP INDEX api_tokens_id`.execute(db);
  await sql`
    ALTER TABLE api_tokens DROP COLUMN id, DROP COLUMN scope, DROP COLUMN expires_at,
      DROP COLUMN last_used_at, DROP COLUMN rotated_at`.execute(db);
}
