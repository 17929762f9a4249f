/**
 * The tool module of the benchmark (`SAGA_TOOLS`): a side-effecting tool that does nothing, so every
 * millisecond and every commit measured is the harness's own. `noop` is reversible, so each call also
 * builds and stores its compensation (`noop_undo`) at intake, as a real reversible tool's call would.
 */
import { z } from 'zod';
import { defineTool, ref } from '@agent-saga/core';

/** The compensation of `noop`; never executed by the bench. Irreversible: nothing undoes an undo. */
export const noopUndo = defineTool({
  name: 'noop_undo',
  class: 'irreversible',
  version: 1,
  args: z.object({ target: z.union([z.string(), z.object({ $ref: z.string() })]) }),
  execute: () => Promise.resolve({ externalRef: null, result: null }),
  lookup: () => Promise.resolve(null),
});

/**
 * Does nothing and returns at once; its lookup never finds anything (there is nothing to find). It answers
 * an external ref, as a real reversible tool does (a charge id): its compensation's `ref(key)` resolves to
 * it, so the unwind phase can undo it (with no ref the compensator cannot build the undo and hands the run
 * to a person).
 */
export const noop = defineTool({
  name: 'noop',
  class: 'reversible',
  version: 1,
  args: z.object({ n: z.number().int() }),
  compensate: (_args, key) => ({ tool: 'noop_undo', args: { target: ref(key) } }),
  execute: (args) => Promise.resolve({ externalRef: `noop-${args.n}`, result: null }),
  lookup: () => Promise.resolve(null),
});

export default [noop, noopUndo];
