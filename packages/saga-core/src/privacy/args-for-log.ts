import type { Level } from 'pino';
import type { Logger } from '../process/logger.js';
import { payloadHash } from '../util/canonical-json.js';
import type { AnyTool } from '../tools/define-tool.js';
import { stepRedaction } from './redact-personal.js';

/**
 * What a log line says about a call's arguments or a step's result: the field names and a hash, never a
 * value. Logs are kept longer, copied further and read by more people than the saga log; a customer's email
 * in a log line outlives its erasure from the database.
 */
export interface ArgsForLog {
  /** The top-level argument names, sorted (`["amount", "currency", "receiptEmail"]`). */
  readonly argNames: readonly string[];
  /**
   * The first {@link LOGGED_HASH_LENGTH} hex digits of sha256 over the canonical JSON of `{ tool, args }`:
   * the prefix of the step's `saga_log.payload_hash` (in hex), so a log line is matched with its row, and
   * two lines with equal arguments show equal hashes, without the arguments.
   */
  readonly argsHash: string;
}

/** Why 16 hex digits (64 bits): enough to match a line with its row, too short to serve as a stored copy. */
export const LOGGED_HASH_LENGTH = 16;

/**
 * The names and hash of `args` for a log line. `hash`: the full payload hash when the caller has it already
 * (the intake has); otherwise it is computed here. Call it only for a line that is written: see
 * {@link logsAt}.
 */
export function argsForLog(tool: string, args: unknown, hash?: string): ArgsForLog {
  const argNames =
    args !== null && typeof args === 'object' && !Array.isArray(args) ? Object.keys(args).sort() : [];
  return { argNames, argsHash: (hash ?? payloadHash(tool, args)).slice(0, LOGGED_HASH_LENGTH) };
}

/** The names of a result's fields (no values), for a log line; an empty list for a scalar or null. */
export function resultNamesForLog(result: unknown): readonly string[] {
  return result !== null && typeof result === 'object' && !Array.isArray(result)
    ? Object.keys(result).sort()
    : [];
}

/**
 * Whether `log` writes lines of `level`: a hot path checks it before it builds what only the line needs
 * (a hash of the arguments), so a role at `warn` pays nothing for its `info` lines.
 */
export const logsAt = (log: Logger, level: Level): boolean => log.isLevelEnabled(level);

/**
 * An error as a log line may carry it: its name, message, stack and own fields (a `code`, a vendor's
 * `details`), with every value at the `secret` and `personal` paths of `args` replaced wherever it is
 * quoted, as for an agent. `tool` undefined (not registered here): nothing is known to hide. A tool's error often quotes its input
 * ("no such recipient: ada@example.com").
 */
export function errorForLog(err: unknown, tool: AnyTool | undefined, args: unknown): unknown {
  const plain =
    err instanceof Error
      ? { type: err.name, message: err.message, stack: err.stack, ...ownFields(err) }
      : err;
  if (tool === undefined) return plain;
  return stepRedaction({ get: () => tool }, { tool: tool.name, args }, 'log').text(plain);
}

function ownFields(err: Error): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(err)) out[k] = v instanceof Error ? `${v.name}: ${v.message}` : v;
  return out;
}
