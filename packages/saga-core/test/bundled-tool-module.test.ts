import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, loadToolRegistry, provideBundledModule, ToolDefinitionError } from '@agent-saga/core';

const note = defineTool({
  name: 'create_note',
  class: 'irreversible',
  version: 1,
  args: z.object({ text: z.string() }),
  execute: () => Promise.resolve({ externalRef: 'N-1', result: {} }),
  lookup: () => Promise.resolve(null),
});

/** This file's process is a "bundle": its SAGA_TOOLS module was provided, from `tools/support.mjs`. */
provideBundledModule('SAGA_TOOLS', 'tools/support.mjs', { default: [note] });

describe('a tool module carried by a role bundle', () => {
  it('answers for the path it was built from, however it is spelled, without reading a file', async () => {
    // No such file exists: the module comes from the bundle.
    for (const path of ['tools/support.mjs', './tools/support.mjs', `${process.cwd()}/tools/support.mjs`]) {
      const registry = await loadToolRegistry(path);
      expect(registry.require('create_note').execute).toBe(note.execute);
    }
  });

  it('refuses another module than it was built with, naming the setting and both paths', async () => {
    const err = await loadToolRegistry('tools/other.mjs').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolDefinitionError);
    expect((err as ToolDefinitionError).field).toBe('SAGA_TOOLS');
    expect((err as Error).message).toContain(
      'this role is a bundle built with tools/support.mjs, and SAGA_TOOLS names tools/other.mjs',
    );
  });
});
