import type { Migration } from 'kysely';
import * as m0001 from './0001_saga_log.js';
import * as m0002 from './0002_email_drafts.js';
import * as m0003 from './0003_reconcile.js';
import * as m0004 from './0004_compensations.js';
import * as m0005 from './0005_approvals.js';
import * as m0006 from './0006_correction_sends.js';
import * as m0007 from './0007_unclaimed_intents.js';

/**
 * Every migration, in order. Append-only: a shipped migration is never edited; a change is a new file.
 * The last name is the schema version this build expects.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = Object.freeze({
  '0001_saga_log': m0001,
  '0002_email_drafts': m0002,
  '0003_reconcile': m0003,
  '0004_compensations': m0004,
  '0005_approvals': m0005,
  '0006_correction_sends': m0006,
  '0007_unclaimed_intents': m0007,
});

export const EXPECTED_SCHEMA_VERSION = Object.keys(MIGRATIONS).at(-1)!;
