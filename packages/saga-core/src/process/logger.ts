import { pino, type Logger, type LoggerOptions } from 'pino';

/**
 * JSON logs. Headers and fields that carry credentials are redacted wherever they appear; tool arguments
 * that a tool declares `secret` are redacted before they reach a logger (`redactArgs`).
 */
export const REDACT_PATHS = [
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

export function createLogger(opts: { level: string; name: string } & LoggerOptions): Logger {
  return pino({ ...opts, redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } });
}

export type { Logger };
