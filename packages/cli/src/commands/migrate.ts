import { EXPECTED_SCHEMA_VERSION, currentSchemaVersion, migrateToLatest } from '@agent-saga/core';
import { CONNECTOR_MIGRATIONS, migrateConnectorTables } from '@agent-saga/connectors/migrations';
import type { Command } from 'commander';
import { printJson, println, type CliIo } from '../cli-io.js';
import { parseDatabaseConfig, withDatabase } from '../database.js';

/**
 * `agent-saga migrate`: applies the pending migrations to SAGA_DB_SCHEMA: core's (the saga log), then the
 * connectors' own tables (their list, `connector_migration`). An explicit step of a deployment, never done by
 * a worker on boot. Each list runs in one transaction under an advisory lock, so two hosts migrating at once
 * serialise; the second finds nothing to apply. A connector migration is printed with its owner
 * (`connectors/0001_email_drafts`); the version printed is core's, the one the services check.
 */
export function registerMigrate(program: Command, io: CliIo): void {
  program
    .command('migrate')
    .description('apply pending saga-log and connector migrations (DATABASE_URL, SAGA_DB_SCHEMA)')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { json?: boolean }) => {
      const config = parseDatabaseConfig(io);
      const { applied, version } = await withDatabase(config, async (db, schema) => {
        const core = await migrateToLatest(db, schema);
        const connectors = await migrateConnectorTables(db, schema);
        const succeeded = (results: typeof core, prefix: string) =>
          results.filter((r) => r.status === 'Success').map((r) => `${prefix}${r.migrationName}`);
        return {
          applied: [...succeeded(core, ''), ...succeeded(connectors, `${CONNECTOR_MIGRATIONS.owner}/`)],
          version: await currentSchemaVersion(db),
        };
      });
      const schema = config.SAGA_DB_SCHEMA;
      if (opts.json) {
        printJson(io, { schema, applied, version, expected: EXPECTED_SCHEMA_VERSION });
        return;
      }
      for (const name of applied) println(io, `applied ${name}`);
      println(
        io,
        applied.length === 0
          ? `nothing to apply: schema ${schema} is already at ${version ?? '(none)'}`
          : `schema ${schema} is now at ${version ?? '(none)'}`,
      );
    });
}
