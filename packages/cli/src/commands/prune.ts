import { parseRetentionAge, pruneLog, PRUNABLE_RUN_STATUSES } from '@agent-saga/core';
import type { Command } from 'commander';
import { CliFailure, CliUsageError, printJson, println, type CliIo } from '../cli-io.js';
import { parseDatabaseConfig, withDatabase } from '../database.js';

/**
 * `agent-saga prune --older-than <age> [--dry-run] [--json]`: retention of the outbox and the journal,
 * by core's `pruneLog` (the same function the reconciler's scheduled job calls, so both delete the same
 * rows). Published outbox rows and step events of final runs, older than the age, go; saga-log rows, their
 * keys, unpublished outbox rows and anything of a run that may still move stay. In batches that each
 * commit, so it may run beside live roles; an interrupted prune leaves only whole batches done. While
 * another prune of the schema runs (a reconciler's job), it does nothing and exits 1.
 */
export function registerPrune(program: Command, io: CliIo): void {
  program
    .command('prune')
    .description(
      'delete published outbox rows and step events of final runs older than an age (DATABASE_URL, SAGA_DB_SCHEMA)',
    )
    .requiredOption('--older-than <age>', 'a whole number and a unit (s, m, h, d, w), e.g. 30d')
    .option('--dry-run', 'count what would be deleted, delete nothing')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { olderThan: string; dryRun?: boolean; json?: boolean }) => {
      const olderThanMs = ageOf(opts.olderThan);
      const config = parseDatabaseConfig(io);
      const dryRun = opts.dryRun === true;
      const r = await withDatabase(config, (db) => pruneLog(db, { olderThanMs, dryRun }));
      if (r.busy)
        throw new CliFailure(
          `another prune of schema ${config.SAGA_DB_SCHEMA} is under way (a reconciler's retention job?); nothing was deleted`,
        );
      if (opts.json) {
        printJson(io, {
          schema: config.SAGA_DB_SCHEMA,
          olderThan: opts.olderThan,
          cutoff: r.cutoff.toISOString(),
          dryRun,
          runStatuses: PRUNABLE_RUN_STATUSES,
          outboxRows: r.outboxRows,
          stepEvents: r.stepEvents,
        });
        return;
      }
      const verb = dryRun ? 'would delete' : 'deleted';
      println(io, `schema ${config.SAGA_DB_SCHEMA}: runs final before ${r.cutoff.toISOString()}`);
      println(io, `${verb} ${r.outboxRows} published outbox rows`);
      println(io, `${verb} ${r.stepEvents} step events`);
    });
}

/** `--older-than`, read by core's one rule for ages; a bad one is a usage error naming the option. */
function ageOf(text: string): number {
  try {
    return parseRetentionAge(text);
  } catch (err) {
    throw new CliUsageError(`--older-than: ${(err as Error).message}`);
  }
}
