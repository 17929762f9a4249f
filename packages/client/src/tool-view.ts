import { z } from 'zod';

/**
 * `GET /v1/tools`: the dispatcher's tools, each with its input as JSON Schema, ready for function calling.
 * Unknown fields are kept (`looseObject`), so a newer dispatcher's additions reach the caller.
 */
export const toolViewSchema = z.looseObject({
  name: z.string(),
  /** What the tool does, for the model; null when the tool declares none. */
  description: z.string().nullable(),
  /** `pure`, `reversible`, `compensatable` or `irreversible`. */
  class: z.string(),
  version: z.number().int().positive(),
  /** The arguments as JSON Schema (draft 2020-12): hand it to the model as the function's parameters. */
  inputSchema: z.record(z.string(), z.unknown()),
  /** Argument paths that make two calls the same operation. */
  identity: z.array(z.string()),
  /** The same operation may be taken twice in a run; otherwise a replanned duplicate is refused. */
  repeatable: z.boolean(),
  /** Who could see the effect; null when it depends on the arguments. */
  audience: z.array(z.string()).nullable(),
  /** Every call is held for a person's approval outside a pivot. */
  needsApproval: z.boolean(),
  movesMoney: z.boolean(),
  deletes: z.boolean(),
  /** Its effect can be undone by a stored compensation. */
  compensated: z.boolean(),
});
export type ToolView = z.infer<typeof toolViewSchema>;

export const toolListSchema = z.object({ tools: z.array(toolViewSchema) });
