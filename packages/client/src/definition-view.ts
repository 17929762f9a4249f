import { z } from 'zod';

/**
 * `GET /v1/definitions`: the saga definitions the dispatcher's tool module declares. Tool classes are kept
 * as strings and unknown fields are kept (`looseObject`), so a newer dispatcher's additions reach the
 * caller and an older client still reads the list.
 */

/** One declared step of a definition. */
export const definitionStepSchema = z.looseObject({
  /** How a plan and a call name the step. */
  id: z.string(),
  tool: z.string(),
  /** `pure`, `reversible`, `compensatable` or `irreversible`. */
  toolClass: z.string(),
  /** Ids of the steps this one stands after. */
  dependsOn: z.array(z.string()),
  /** The go/no-go step, the first one a pivot approval commits; every irreversible step is after it. */
  pivot: z.boolean(),
  /** The business action may rightly be taken twice in one run. */
  repeatable: z.boolean(),
});
export type DefinitionStep = z.infer<typeof definitionStepSchema>;

/** One registered version of a saga definition. */
export const definitionViewSchema = z.looseObject({
  name: z.string(),
  version: z.number().int().positive(),
  steps: z.array(definitionStepSchema),
});
export type DefinitionView = z.infer<typeof definitionViewSchema>;

export const definitionListSchema = z.object({ definitions: z.array(definitionViewSchema) });
