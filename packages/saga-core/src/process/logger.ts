import { pino, type Logger, type LoggerOptions } from 'pino';

/**
 * JSON logs. Headers and fields that carry credentials are redacted wherever they appear. Tool arguments
 * and results never reach a logger: a line about a call carries the argument names and a hash
 * (`privacy/args-for-log.ts`), and a tool's error has the step's `secret` and `personal` values scrubbed
 * (`errorForLog`). The `args` paths below are a second line of defence, for a line written without them.
 */
export const REDACT_PATHS = [
  'args',
  '*.args',
  'authorization',
  '*.authorization',
  'req.headers.authorization',
  'headers.authorization',
  'token',
  '*.token',
  'password',
  '*.password',
  'apiKey',
  '*.apiKey',
  'secretKey',
  '*.secretKey',
];

/**
 * A role's logger, with the redaction every role shares. `destination`: where lines go, stdout (fd 1) by
 * default; a role whose stdout carries a protocol (the MCP gateway over stdio) writes to stderr (2).
 */
export function createLogger(
  opts: { level: string; name: string; destination?: 1 | 2 } & LoggerOptions,
): Logger {
  const { destination, ...options } = opts;
  const redacted = { ...options, redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } };
  return destination === undefined ? pino(redacted) : pino(redacted, pino.destination(destination));
}

export type { Logger };
