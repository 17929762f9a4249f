import {
  BadRequestError,
  InvalidArgsError,
  parseCallArgs,
  ToolClass,
  ToolNotRegisteredError,
  type PivotCommitStep,
  type ToolRegistry,
} from '@agent-saga/core';

/** A commit step as the request body names it: a tool by name and its arguments, unparsed. */
export interface PivotCommitBody {
  readonly tool: string;
  readonly args: Record<string, unknown>;
}

/**
 * Parses the commit steps of `POST /runs/{runId}/pivot` before anything is locked or written: each must
 * name a registered, side-effecting tool (a pure one needs no approval: call it) and arguments its schema
 * accepts. A refusal is a 400 naming `commit.<i>.…`. Staging itself is core's `stagePivot`.
 */
export function parsePivotCommit(
  registry: ToolRegistry,
  commit: readonly PivotCommitBody[],
): PivotCommitStep[] {
  return commit.map((c, i) => commitStep(registry, c, i));
}

function commitStep(registry: ToolRegistry, c: PivotCommitBody, i: number): PivotCommitStep {
  const tool = registry.get(c.tool);
  if (!tool) {
    const err = new ToolNotRegisteredError(c.tool);
    throw new BadRequestError(`commit.${i}.tool`, `commit.${i}.tool: ${err.message}`);
  }
  if (tool.class === ToolClass.PURE)
    throw new BadRequestError(
      `commit.${i}.tool`,
      `commit.${i}.tool: ${c.tool} is pure; call it, it needs no approval`,
    );
  try {
    return { tool, args: parseCallArgs(tool, c.args) };
  } catch (err) {
    if (err instanceof InvalidArgsError)
      throw new BadRequestError(
        `commit.${i}.${err.field}`,
        `commit.${i}.${err.field}: ${err.message}`,
        err.issues.map((x) => ({ field: `commit.${i}.${x.field}`, message: x.message })),
      );
    throw err;
  }
}
