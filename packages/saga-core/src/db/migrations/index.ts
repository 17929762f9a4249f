import type { Migration } from 'kysely';
import * as m0001 from './0001_saga_log.js';
import * as m0002 from './0002_email_drafts.js';

/**
 * Every migration, in order. Append-only: a shipped migration is never edited; a change is a new file.
 * The last name is the schema version this build expects.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = Object.freeze({
  '0001_saga_log': m0001,
  '0002_email_drafts': m0002,
});

export const EXPECTED_SCHEMA_VERSION = Object.keys(MIGRATIONS).at(-1)!;
