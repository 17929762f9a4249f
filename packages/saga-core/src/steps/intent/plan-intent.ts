import { payloadHash } from '../../util/canonical-json.js';
import { errorForLog } from '../../privacy/args-for-log.js';
import type { StoredCompensation } from '../../db/schema.js';
import { ToolDefinitionError } from '../../errors/errors.js';
import { compensationKey, stepKey } from './idempotency-key.js';
import type { Logger } from '../../process/logger.js';
import { StepStatus } from '../step-status.js';
import { ToolClass } from '../../tools/tool-class.js';
import type { AnyTool } from '../../tools/define-tool.js';
import type { ToolRegistry } from '../../tools/tool-registry.js';

/** Everything about a new step that is decided before its row is written. */
export interface IntentPlan {
  readonly idempotencyKey: string;
  /** INTENDED (dispatch now) or AWAITING_APPROVAL (held for a human). */
  readonly status: typeof StepStatus.INTENDED | typeof StepStatus.AWAITING_APPROVAL;
  /** Why the step is held, when it is. */
  readonly holdReason: string | null;
  readonly compensation: StoredCompensation | null;
  readonly correction: Record<string, unknown> | null;
  readonly audience: readonly string[];
  readonly payloadHash: string;
}

/**
 * Plans a new step of `tool` with parsed `args` at `stepIdx`. The compensation is built now, before the call,
 * and stored as data with its own key (`compensate:<tool>`), because a crash after the effect must not lose
 * it. Irreversible tools, and compensatable or reversible tools whose compensation cannot be built for these
 * arguments, are held for approval instead of executed.
 */
export function planIntent(input: {
  readonly tool: AnyTool;
  readonly args: Record<string, unknown>;
  readonly runId: string;
  readonly stepIdx: number;
  readonly registry: ToolRegistry;
  readonly logger: Logger;
}): IntentPlan {
  const { tool, args, runId, stepIdx } = input;
  const key = stepKey(runId, stepIdx, tool.name);
  const base = {
    idempotencyKey: key,
    correction: tool.correction ? { ...tool.correction(args, key) } : null,
    audience: [...tool.audience(args)],
    payloadHash: payloadHash(tool.name, args),
  };
  if (tool.class === ToolClass.IRREVERSIBLE)
    return {
      ...base,
      status: StepStatus.AWAITING_APPROVAL,
      holdReason: 'irreversible tool',
      compensation: null,
    };
  if (!tool.compensate) return { ...base, status: StepStatus.INTENDED, holdReason: null, compensation: null };
  let command: ReturnType<NonNullable<AnyTool['compensate']>>;
  try {
    command = tool.compensate(args, key);
  } catch (err) {
    // A compensation that throws cannot be relied on for these arguments: hold the call, never run it bare.
    input.logger.warn(
      { err: errorForLog(err, tool, args), tool: tool.name },
      'compensate threw; holding the call for approval',
    );
    command = null;
  }
  if (!command)
    return {
      ...base,
      status: StepStatus.AWAITING_APPROVAL,
      holdReason: 'no compensation can be built for these arguments',
      compensation: null,
    };
  const target = input.registry.get(command.tool);
  if (!target)
    throw new ToolDefinitionError(tool.name, 'compensate', `names unregistered tool ${command.tool}`);
  return {
    ...base,
    status: StepStatus.INTENDED,
    holdReason: null,
    compensation: {
      tool: target.name,
      toolVersion: target.version,
      args: command.args,
      key: compensationKey(runId, stepIdx, tool.name),
    },
  };
}
