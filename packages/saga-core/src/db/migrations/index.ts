import type { Migration } from 'kysely';
import * as m0001 from './0001_saga_log.js';
import * as m0002 from './0002_email_drafts.js';
import * as m0003 from './0003_reconcile.js';
import * as m0004 from './0004_compensations.js';
import * as m0005 from './0005_approvals.js';
import * as m0006 from './0006_correction_sends.js';
import * as m0007 from './0007_unclaimed_intents.js';
import * as m0008 from './0008_gauge_counters.js';
import * as m0010 from './0010_hot_path_indexes.js';
import * as m0011 from './0011_align_edited_migrations.js';
import * as m0012 from './0012_step_key_without_index.js';
import * as m0013 from './0013_bound_runs.js';
import * as m0014 from './0014_recovery_approvals.js';
import * as m0015 from './0015_definition_metrics.js';
import * as m0016 from './0016_fresh_duplicate_check.js';
import * as m0017 from './0017_token_lifecycle.js';
import * as m0018 from './0018_tenant_policy_floors.js';
import * as m0019 from './0019_trace_context.js';
import * as m0020 from './0020_duplicate_check_plan.js';
import * as m0021 from './0021_saga_log_column_order.js';
import * as m0022 from './0022_standard_events_in_row.js';
import * as m0023 from './0023_narrow_saga_log_row.js';
import * as m0024 from './0024_run_cursor_floor.js';
import * as m0025 from './0025_capture_check_by_key.js';
import * as m0026 from './0026_duplicate_check_per_group.js';

/**
 * Every migration, in order. Append-only: a committed migration is never edited, a change is a new file.
 * A migration imports nothing live (no status object, no list derived from one): it spells out its own
 * lists, so what it creates never changes after it is committed (`test/schema/migrated-schema.txt` and its
 * test check it). The last name is the schema version this build expects.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = Object.freeze({
  '0001_saga_log': m0001,
  '0002_email_drafts': m0002,
  '0003_reconcile': m0003,
  '0004_compensations': m0004,
  '0005_approvals': m0005,
  '0006_correction_sends': m0006,
  '0007_unclaimed_intents': m0007,
  '0008_gauge_counters': m0008,
  '0010_hot_path_indexes': m0010,
  '0011_align_edited_migrations': m0011,
  '0012_step_key_without_index': m0012,
  '0013_bound_runs': m0013,
  '0014_recovery_approvals': m0014,
  '0015_definition_metrics': m0015,
  '0016_fresh_duplicate_check': m0016,
  '0017_token_lifecycle': m0017,
  '0018_tenant_policy_floors': m0018,
  '0019_trace_context': m0019,
  '0020_duplicate_check_plan': m0020,
  '0021_saga_log_column_order': m0021,
  '0022_standard_events_in_row': m0022,
  '0023_narrow_saga_log_row': m0023,
  '0024_run_cursor_floor': m0024,
  '0025_capture_check_by_key': m0025,
  '0026_duplicate_check_per_group': m0026,
});

export const EXPECTED_SCHEMA_VERSION = Object.keys(MIGRATIONS).at(-1)!;
