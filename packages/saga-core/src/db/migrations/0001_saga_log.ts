import { sql, type Kysely } from 'kysely';

/**
 * The saga log. Partial indexes keep sweeps of unsettled rows (INTENDED, UNKNOWN) and unpublished outbox
 * rows proportional to the unsettled work, not to the millions of settled rows beside them.
 *
 * Frozen (issue 11): every status list is spelled out as this file created it on a fresh database when it
 * was frozen. It used to derive them from the status objects in `statuses.ts`, so a new status silently
 * changed what 0001 creates while deployed databases kept their lists. For every list but one that is also
 * what the file created when first committed; `step_events.kind` then had four kinds, and 0004 and 0005
 * replace that constraint on every database anyway. A new status is a new migration, never an edit here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE runs (
      run_id        text PRIMARY KEY,
      tenant_id     text NOT NULL,
      status        text NOT NULL
                    CHECK (status IN ('RUNNING', 'AWAITING_APPROVAL', 'COMPENSATING', 'COMPLETED', 'COMPENSATED',
                                      'PARTIALLY_COMPENSATED', 'COMMITTED_WITH_REPAIR', 'MANUAL_INTERVENTION')),
      status_reason text,
      cursor        integer NOT NULL DEFAULT 0 CHECK (cursor >= 0),
      metadata      jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at    timestamptz NOT NULL DEFAULT now(),
      updated_at    timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX runs_tenant_created ON runs (tenant_id, created_at DESC)`.execute(db);
  await sql`CREATE INDEX runs_open ON runs (updated_at) WHERE status IN ('RUNNING', 'AWAITING_APPROVAL', 'COMPENSATING')`.execute(
    db,
  );

  await sql`
    CREATE TABLE saga_log (
      run_id              text NOT NULL REFERENCES runs (run_id),
      step_idx            integer NOT NULL CHECK (step_idx >= 0),
      tenant_id           text NOT NULL,
      tool                text NOT NULL,
      tool_class          text NOT NULL
                          CHECK (tool_class IN ('pure', 'reversible', 'compensatable', 'irreversible')),
      tool_version        integer NOT NULL,
      idempotency_key     text NOT NULL UNIQUE,
      args                jsonb NOT NULL,
      payload_hash        text NOT NULL,
      status              text NOT NULL
                          CHECK (status IN ('AWAITING_APPROVAL', 'INTENDED', 'CONFIRMED', 'FAILED', 'UNKNOWN',
                                            'NOT_EXECUTED', 'REJECTED', 'MANUAL_INTERVENTION')),
      external_ref        text,
      result              jsonb,
      error               jsonb,
      compensation        jsonb,
      compensation_status text
                          CHECK (compensation_status IN ('pending', 'running', 'compensated', 'unknown', 'failed',
                                                         'skipped')),
      correction          jsonb,
      audience            text[] NOT NULL DEFAULT '{}',
      depends_on          integer[],
      attempts            integer NOT NULL DEFAULT 0,
      lease_until         timestamptz,
      lease_owner         text,
      last_attempt_at     timestamptz,
      outcome_delivered   boolean NOT NULL DEFAULT false,
      created_at          timestamptz NOT NULL DEFAULT now(),
      updated_at          timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (run_id, step_idx)
    )`.execute(db);
  // So sweeps (reconciler, lease expiry) touch only unsettled rows.
  await sql`CREATE INDEX saga_log_unsettled ON saga_log (lease_until NULLS FIRST, updated_at) WHERE status IN ('INTENDED', 'UNKNOWN')`.execute(
    db,
  );
  await sql`CREATE INDEX saga_log_tenant ON saga_log (tenant_id, run_id)`.execute(db);

  await sql`
    CREATE TABLE step_events (
      id          bigserial PRIMARY KEY,
      run_id      text NOT NULL,
      step_idx    integer NOT NULL,
      kind        text NOT NULL
                  CHECK (kind IN ('transition', 'attempt', 'retry_call', 'lookup', 'compensation', 'run_transition',
                                  'decision')),
      from_status text,
      to_status   text,
      cause       text NOT NULL,
      detail      jsonb,
      at          timestamptz NOT NULL DEFAULT clock_timestamp()
    )`.execute(db);
  await sql`CREATE INDEX step_events_run ON step_events (run_id, id)`.execute(db);

  await sql`
    CREATE TABLE outbox (
      id              bigserial PRIMARY KEY,
      topic           text NOT NULL,
      run_id          text NOT NULL,
      step_idx        integer NOT NULL,
      idempotency_key text NOT NULL,
      job_id          text NOT NULL UNIQUE,
      payload         jsonb NOT NULL,
      created_at      timestamptz NOT NULL DEFAULT now(),
      published_at    timestamptz
    )`.execute(db);
  // So relays claim only unpublished rows, oldest first.
  await sql`CREATE INDEX outbox_unpublished ON outbox (id) WHERE published_at IS NULL`.execute(db);

  await sql`
    CREATE TABLE api_tokens (
      token_hash text PRIMARY KEY,
      tenant_id  text NOT NULL,
      role       text NOT NULL CHECK (role IN ('agent', 'operator')),
      label      text,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['api_tokens', 'outbox', 'step_events', 'saga_log', 'runs'])
    await sql`DROP TABLE ${sql.table(t)}`.execute(db);
}
