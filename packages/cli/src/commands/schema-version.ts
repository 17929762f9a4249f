import { EXPECTED_SCHEMA_VERSION, SchemaVersionMismatchError, currentSchemaVersion } from '@agent-saga/core';
import type { Command } from 'commander';
import { CliFailure, printJson, println, type CliIo } from '../cli-io.js';
import { parseDatabaseConfig, withDatabase } from '../database.js';

/**
 * `agent-saga schema-version`: the migration the schema is at and the one this build expects. Exits 1
 * when they differ, so a deploy script can gate on it; the message says what to do (core's
 * `SchemaVersionMismatchError`, the same words a service prints when it refuses to start).
 */
export function registerSchemaVersion(program: Command, io: CliIo): void {
  program
    .command('schema-version')
    .description('print the schema version found and the one this build expects; exit 1 if they differ')
    .option('--json', 'print the versions as JSON')
    .action(async (opts: { json?: boolean }) => {
      const config = parseDatabaseConfig(io);
      const current = await withDatabase(config, (db) => currentSchemaVersion(db));
      const upToDate = current === EXPECTED_SCHEMA_VERSION;
      if (opts.json) {
        printJson(io, {
          schema: config.SAGA_DB_SCHEMA,
          current,
          expected: EXPECTED_SCHEMA_VERSION,
          upToDate,
        });
      } else {
        println(io, `schema:   ${config.SAGA_DB_SCHEMA}`);
        println(io, `current:  ${current ?? '(not migrated)'}`);
        println(io, `expected: ${EXPECTED_SCHEMA_VERSION}`);
      }
      if (!upToDate)
        throw new CliFailure(new SchemaVersionMismatchError(EXPECTED_SCHEMA_VERSION, current).message);
    });
}
