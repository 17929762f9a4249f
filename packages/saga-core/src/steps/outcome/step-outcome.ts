import type { StepStatus } from '../step-status.js';
import type { ToolEffect } from '../../tools/define-tool.js';
import type { StoredToolError } from './classify-tool-error.js';

/** What one attempt of a tool produced, as the executor saw it. */
export type StepOutcome =
  | { readonly status: typeof StepStatus.CONFIRMED; readonly effect: ToolEffect }
  | { readonly status: typeof StepStatus.FAILED; readonly error: StoredToolError }
  | { readonly status: typeof StepStatus.UNKNOWN; readonly error: StoredToolError };
