import { SagaApiError } from '@agent-saga/client';
import { ConfigError } from '@agent-saga/core';
import { Command, CommanderError } from 'commander';
import { CliFailure, CliUsageError, ExitCode, type CliIo } from './cli-io.js';
import { registerApprovals } from './commands/approvals.js';
import { registerBundle } from './commands/bundle.js';
import { registerCases } from './commands/cases.js';
import { registerCorrections } from './commands/corrections.js';
import { registerMigrate } from './commands/migrate.js';
import { registerPolicy } from './commands/policy.js';
import { registerPrune } from './commands/prune.js';
import { registerRuns } from './commands/runs.js';
import { registerSchemaVersion } from './commands/schema-version.js';
import { registerTokens } from './commands/tokens.js';

/**
 * The `agent-saga` program: one `register…` per command group, each in its own file under `commands/`.
 * `migrate`, `schema-version`, `prune` and `tokens` talk to Postgres (DATABASE_URL); `runs`, `approvals`, `cases`
 * and `corrections` talk to the dispatcher's HTTP API (AGENT_SAGA_URL, AGENT_SAGA_TOKEN); `bundle` builds
 * one file per role for a faster start.
 */
export function createProgram(io: CliIo): Command {
  const program = new Command('agent-saga')
    .description('agent-saga: migrations, API tokens and the operator tools of the saga log')
    // Settings made before `.command()` are inherited by every subcommand.
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
    })
    .showHelpAfterError('(run with --help for usage)');
  registerMigrate(program, io);
  registerSchemaVersion(program, io);
  registerPrune(program, io);
  registerTokens(program, io);
  registerRuns(program, io);
  registerApprovals(program, io);
  registerCases(program, io);
  registerCorrections(program, io);
  registerPolicy(program, io);
  registerBundle(program, io);
  return program;
}

/**
 * Runs one command line (`argv` without node and the script) and returns the exit code instead of
 * exiting, so the caller decides how the process ends. 0 done, 1 failed (or refused by the API, whose
 * error code and message are printed), 2 wrong usage or environment.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  try {
    await createProgram(io).parseAsync([...argv], { from: 'user' });
    return ExitCode.OK;
  } catch (err) {
    return report(err, io);
  }
}

function report(err: unknown, io: CliIo): ExitCode {
  // Commander has already printed its own message (unknown option, missing or invalid --role, help).
  if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
  // The API said no (or could not be reached): its stable code first, for scripts to match on.
  if (err instanceof SagaApiError) {
    const status = err.status === null ? 'no answer' : `HTTP ${err.status}`;
    io.stderr.write(`error: ${err.code} (${status}): ${err.message}\n`);
    return ExitCode.FAILURE;
  }
  const message = err instanceof Error ? err.message : String(err);
  io.stderr.write(`error: ${message}\n`);
  if (err instanceof CliUsageError || err instanceof ConfigError) return ExitCode.USAGE;
  if (!(err instanceof CliFailure) && err instanceof Error && err.name !== 'Error')
    io.stderr.write(`(${err.name})\n`);
  return ExitCode.FAILURE;
}
