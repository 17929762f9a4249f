import type { MigrationList } from '@agent-saga/core';
import * as m0001 from './0001_email_drafts.js';

/**
 * The connectors' own tables, in order, recorded in `connector_migration` beside core's `saga_migration`.
 * Append-only like core's: a committed migration is never edited, and imports nothing live.
 * `agent-saga migrate` runs this list after core's.
 */
export const CONNECTOR_MIGRATIONS: MigrationList = Object.freeze({
  owner: 'connectors',
  table: 'connector_migration',
  migrations: Object.freeze({
    '0001_email_drafts': m0001,
  }),
});
