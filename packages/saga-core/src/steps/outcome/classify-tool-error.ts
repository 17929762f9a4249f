import { ErrorCode } from '../../errors/error-code.js';
import { ClientError, SagaError } from '../../errors/errors.js';
import { StepStatus } from '../step-status.js';

/** How an error is stored in `saga_log.error`: stable code, message, and the vendor's status when known. */
export interface StoredToolError {
  readonly code: string;
  readonly message: string;
  readonly status?: number;
  readonly vendorCode?: string;
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
      error: withVendor({ code: err.code, message: err.message }, err.details.status, err.details.vendorCode),
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
  return { status: StepStatus.UNKNOWN, error: withVendor({ code, message }, ...vendorFields(err)) };
}

/** Reads `status`/`statusCode` and `vendorCode`/`code` from an error that an HTTP client threw. */
function vendorFields(err: unknown): [number | undefined, string | undefined] {
  if (err === null || typeof err !== 'object') return [undefined, undefined];
  const e = err as Record<string, unknown>;
  const status = [e.status, e.statusCode].find((v): v is number => typeof v === 'number');
  const vendorCode = typeof e.vendorCode === 'string' ? e.vendorCode : undefined;
  return [status, vendorCode];
}

function withVendor(
  base: { code: string; message: string },
  status: number | undefined,
  vendorCode: string | undefined,
): StoredToolError {
  return {
    ...base,
    ...(status !== undefined ? { status } : {}),
    ...(vendorCode !== undefined ? { vendorCode } : {}),
  };
}
