import { z } from 'zod';
import type { Audience } from '../review/corrections/audience.js';
import type { AnyTool } from './define-tool.js';
import { ToolClass } from './tool-class.js';
import type { ToolRegistry } from './tool-registry.js';

/**
 * A tool as a caller in any language sees it: what function calling needs (name, description, the input
 * as JSON Schema) and what the harness will do with a call (class, identity, audience, approval).
 */
export interface ToolDescription {
  readonly name: string;
  readonly description: string | null;
  readonly class: ToolClass;
  readonly version: number;
  /**
   * The arguments as JSON Schema (draft 2020-12), from the tool's zod schema as it reads its input: a
   * value this schema refuses is refused by the harness with `400 INVALID_ARGS` naming the field.
   */
  readonly inputSchema: Record<string, unknown>;
  /** The argument paths that make two calls the same operation (a retry that changes one is refused). */
  readonly identity: readonly string[];
  /** The same operation may be taken twice in a run; otherwise a replanned duplicate is refused. */
  readonly repeatable: boolean;
  /** Who could see the effect; null when it depends on the arguments. */
  readonly audience: readonly Audience[] | null;
  /**
   * Every call is held for a person's approval outside a pivot (an irreversible tool). A run's policy may
   * hold other calls too (`approveMoneyAbove`): the call's answer says so (`AWAITING_APPROVAL`).
   */
  readonly needsApproval: boolean;
  /** The call may move money (counted against a run's `budget.maxAmount`). */
  readonly movesMoney: boolean;
  /** The call deletes something. */
  readonly deletes: boolean;
  /** Its effect can be undone by a stored compensation (compensatable and reversible tools). */
  readonly compensated: boolean;
}

/**
 * Describes a tool for `GET /v1/tools`. Why `io: 'input'`: the schema a caller must meet is the one the
 * harness parses with, before any transform; a zod construct JSON Schema cannot express (a refinement, a
 * transform) is described by its input type and still checked by the harness.
 */
export function describeTool(tool: AnyTool): ToolDescription {
  const inputSchema = z.toJSONSchema(tool.args, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return {
    name: tool.name,
    description: tool.description ?? null,
    class: tool.class,
    version: tool.version,
    inputSchema,
    identity: tool.identity,
    repeatable: tool.repeatable,
    audience: tool.fixedAudience,
    needsApproval: tool.class === ToolClass.IRREVERSIBLE,
    movesMoney: tool.moves !== undefined,
    deletes: tool.deletes,
    compensated: tool.class === ToolClass.COMPENSATABLE || tool.class === ToolClass.REVERSIBLE,
  };
}

/** Every tool of the registry, described, by name. */
export function describeTools(registry: ToolRegistry): ToolDescription[] {
  return registry
    .list()
    .map(describeTool)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
