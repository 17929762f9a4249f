import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SagaDefinitionError } from '../errors/errors.js';
import { loadToolRegistry } from '../tools/load-tools.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { createSagaRegistry, type SagaRegistry } from './saga-registry.js';

/** What a tool module declares: its tools and the saga definitions built on them. */
export interface ToolModule {
  readonly tools: ToolRegistry;
  readonly definitions: SagaRegistry;
}

/**
 * Loads the tool module named by `SAGA_TOOLS`: its default export is the array of tools (as
 * `loadToolRegistry` reads it), and it may also export `definitions`, an array of `defineSaga` results,
 * registered against those tools. A module without `definitions` loads as before, with no definitions.
 * A bad tool or definition stops the role at start, naming the field.
 */
export async function loadToolModule(modulePath: string): Promise<ToolModule> {
  const tools = await loadToolRegistry(modulePath);
  // The same URL as loadToolRegistry's: the module is evaluated once, this reads its other export.
  const mod = (await import(pathToFileURL(resolve(modulePath)).href)) as { definitions?: unknown };
  if (mod.definitions !== undefined && !Array.isArray(mod.definitions))
    throw new SagaDefinitionError(
      '(module)',
      'definitions',
      `${modulePath} must export definitions as an array of saga definitions`,
    );
  return { tools, definitions: createSagaRegistry(tools, (mod.definitions as unknown[] | undefined) ?? []) };
}
