import { ErrorCode } from '../../errors/error-code.js';
import { ClientError, SagaError } from '../../errors/errors.js';
import { StepStatus } from '../step-status.js';

/** How an error is stored in `saga_log.error`: stable code, message, and the vendor's status when known. */
export interface StoredToolError {
  readonly code: string;
  readonly message: string;
  readonly status?: number;
  readonly vendorCode?: string;
  /**
   * The attempt (`ToolContext.attempt`) whose answer `status` is, when the tool says so: set only by an
   * error that carries the vendor's answer. The lookup rule trusts an answered 429 only for the step's
   * last attempt (`answered-rate-limit.ts`): the row's error outlives a re-dispatch.
   */
  readonly attempt?: number;
  /** The vendor's `Retry-After`, in milliseconds, when its answer carried one. */
  readonly retryAfterMs?: number;
}

/** What a failed call means for the step. */
export interface ToolErrorOutcome {
  readonly status: typeof StepStatus.FAILED | typeof StepStatus.UNKNOWN;
  readonly error: StoredToolError;
}

/**
 * Classifies what escaped a tool by what the runtime must do. Only a {@link ClientError} (the real system
 * said no; nothing happened) is FAILED. Everything else — timeouts, aborts, 5xx, resets, unexpected
 * exceptions — may have taken effect and is UNKNOWN, for the reconciler to resolve by lookup.
 *
 * `reason` tells a timeout or a shutdown abort apart from the tool's own error (the executor knows which of
 * its signals fired; the error a tool throws on abort rarely says): `TOOL_TIMEOUT`, `TOOL_ABORTED`. A
 * {@link SagaError} keeps its own code; anything else that escaped the tool (5xx, reset, an unexpected
 * exception) is `OUTCOME_UNKNOWN`.
 */
export function classifyToolError(err: unknown, reason?: 'timeout' | 'shutdown'): ToolErrorOutcome {
  if (err instanceof ClientError && reason === undefined) {
    return {
      status: StepStatus.FAILED,
      error: withVendor(
        { code: err.code, message: err.message },
        { status: err.details.status, vendorCode: err.details.vendorCode },
      ),
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  const code =
    reason === 'timeout'
      ? ErrorCode.TOOL_TIMEOUT
      : reason === 'shutdown'
        ? ErrorCode.TOOL_ABORTED
        : err instanceof SagaError
          ? err.code
          : ErrorCode.OUTCOME_UNKNOWN;
  return { status: StepStatus.UNKNOWN, error: withVendor({ code, message }, vendorFields(err)) };
}

/** What {@link vendorFields} reads off an error an HTTP client or a connector threw. */
type VendorFields = Pick<StoredToolError, 'status' | 'vendorCode' | 'attempt' | 'retryAfterMs'>;

/**
 * Reads `status`/`statusCode`, `vendorCode`, `attempt` and `retryAfterMs` from an error that an HTTP client
 * or a connector threw (each only when it is of the right type: a whole attempt number ≥ 1, a finite
 * `retryAfterMs` ≥ 0).
 */
function vendorFields(err: unknown): VendorFields {
  if (err === null || typeof err !== 'object') return {};
  const e = err as Record<string, unknown>;
  const status = [e.status, e.statusCode].find((v): v is number => typeof v === 'number');
  const vendorCode = typeof e.vendorCode === 'string' ? e.vendorCode : undefined;
  const attempt =
    typeof e.attempt === 'number' && Number.isInteger(e.attempt) && e.attempt >= 1 ? e.attempt : undefined;
  const retryAfterMs =
    typeof e.retryAfterMs === 'number' && Number.isFinite(e.retryAfterMs) && e.retryAfterMs >= 0
      ? e.retryAfterMs
      : undefined;
  return { status, vendorCode, attempt, retryAfterMs };
}

function withVendor(base: { code: string; message: string }, vendor: VendorFields): StoredToolError {
  return {
    ...base,
    ...(vendor.status !== undefined ? { status: vendor.status } : {}),
    ...(vendor.vendorCode !== undefined ? { vendorCode: vendor.vendorCode } : {}),
    ...(vendor.attempt !== undefined ? { attempt: vendor.attempt } : {}),
    ...(vendor.retryAfterMs !== undefined ? { retryAfterMs: vendor.retryAfterMs } : {}),
  };
}
