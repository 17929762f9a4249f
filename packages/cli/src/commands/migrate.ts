import { EXPECTED_SCHEMA_VERSION, currentSchemaVersion, migrateToLatest } from '@agent-saga/core';
import type { Command } from 'commander';
import { printJson, println, type CliIo } from '../cli-io.js';
import { parseDatabaseConfig, withDatabase } from '../database.js';

/**
 * `agent-saga migrate`: applies the pending saga-log migrations to SAGA_DB_SCHEMA. An explicit step of a
 * deployment, never done by a worker on boot. Core runs them in one transaction under an advisory lock,
 * so two hosts migrating at once serialise; the second finds nothing to apply.
 */
export function registerMigrate(program: Command, io: CliIo): void {
  program
    .command('migrate')
    .description('apply pending saga-log migrations (DATABASE_URL, SAGA_DB_SCHEMA)')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { json?: boolean }) => {
      const config = parseDatabaseConfig(io);
      const { applied, version } = await withDatabase(config, async (db, schema) => {
        const results = await migrateToLatest(db, schema);
        return {
          applied: results.filter((r) => r.status === 'Success').map((r) => r.migrationName),
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
