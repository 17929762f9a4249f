import { migrateListToLatest, type SagaDb } from '@agent-saga/core';
import type { MigrationResult } from 'kysely';
import { CONNECTOR_MIGRATIONS } from './migrations/index.js';

export { CONNECTOR_MIGRATIONS };

/**
 * Runs the connectors' pending migrations (their own tables: `email_drafts`) into `schema`, after core's
 * `migrateToLatest`. `agent-saga migrate` runs both; so does a test that writes a connector's table.
 *
 * Its own entry point (`@agent-saga/connectors/migrations`), so the CLI loads the migrations without the
 * vendors' SDKs.
 */
export function migrateConnectorTables(db: SagaDb, schema: string): Promise<readonly MigrationResult[]> {
  return migrateListToLatest(db, schema, CONNECTOR_MIGRATIONS);
}
