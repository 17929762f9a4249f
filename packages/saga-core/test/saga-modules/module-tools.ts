/** Tools shared by the tool modules of `saga-definitions.test.ts`. */
import { z } from 'zod';
import { defineTool, type AnyTool } from '@agent-saga/core';

const lookup = () => Promise.resolve(null);
const execute = () => Promise.resolve({ externalRef: 'X-1', result: {} });

export const moduleTools: readonly AnyTool[] = [
  defineTool({ name: 'get_order', class: 'pure', version: 1, args: z.object({}), execute }),
  defineTool({
    name: 'create_ticket',
    class: 'compensatable',
    version: 1,
    args: z.object({ orderId: z.string() }),
    compensate: (_a, key) => ({ tool: 'close_ticket', args: { ticket: { $ref: key } } }),
    execute,
    lookup,
  }),
  defineTool({
    name: 'close_ticket',
    class: 'irreversible',
    version: 1,
    args: z.object({ ticket: z.unknown() }),
    execute,
    lookup,
  }),
] as AnyTool[];
