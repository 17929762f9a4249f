import { ConfigError } from '@agent-saga/core';
import { Command, CommanderError } from 'commander';
import { CliFailure, CliUsageError, ExitCode, type CliIo } from './cli-io.js';
import { registerMigrate } from './commands/migrate.js';
import { registerSchemaVersion } from './commands/schema-version.js';
import { registerTokens } from './commands/tokens.js';

/**
 * The `agent-saga` program: one `register…` per command, each in its own file under `commands/`. A new
 * command group (`runs`, `approvals`, `cases`, `corrections`) is one more file and one more line here.
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
  registerTokens(program, io);
  return program;
}

/**
 * Runs one command line (`argv` without node and the script) and returns the exit code instead of
 * exiting, so the caller decides how the process ends. 0 done, 1 failed, 2 wrong usage or environment.
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
  const message = err instanceof Error ? err.message : String(err);
  io.stderr.write(`error: ${message}\n`);
  if (err instanceof CliUsageError || err instanceof ConfigError) return ExitCode.USAGE;
  if (!(err instanceof CliFailure) && err instanceof Error && err.name !== 'Error')
    io.stderr.write(`(${err.name})\n`);
  return ExitCode.FAILURE;
}
