/**
 * What a command may touch of the outside world, passed in explicitly so that nothing reads `process.env`
 * or writes to the console behind the program's back (and so that later commands stay testable in
 * process too).
 */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/** Exit codes, each with one meaning that scripts may rely on. */
export const ExitCode = {
  OK: 0,
  /** The command ran and failed (database unreachable, migration error, schema mismatch). */
  FAILURE: 1,
  /** The command line or the environment was wrong: nothing was done. */
  USAGE: 2,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A wrong command line that commander's own parsing cannot catch. Exit 2, nothing done. */
export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
  }
}

/** A command that finished but must report failure (a schema at the wrong version, say). */
export class CliFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliFailure';
  }
}

/** Writes one line to stdout. */
export function println(io: CliIo, line = ''): void {
  io.stdout.write(`${line}\n`);
}

/** Writes `value` as pretty JSON, for `--json`. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
