import { SagaDefinitionError } from '../errors/errors.js';
import { importModuleFile } from '../tools/import-module-file.js';
import { loadToolRegistry } from '../tools/load-tools.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { ToolModuleLookup, ToolModuleLookups } from './saga-invariant.js';
import { createSagaRegistry, type SagaRegistry } from './saga-registry.js';

/** What a tool module declares: its tools, the saga definitions built on them, and their invariants' reads. */
export interface ToolModule {
  readonly tools: ToolRegistry;
  readonly definitions: SagaRegistry;
  /** The module's `lookups` (frozen), the reads a definition's invariant may make; `{}` when it has none. */
  readonly lookups: ToolModuleLookups;
}

/**
 * Loads the tool module named by `SAGA_TOOLS`: its default export is the array of tools (as
 * `loadToolRegistry` reads it), and it may also export `definitions`, an array of `defineSaga` results,
 * registered against those tools, and `lookups`, an object of named read functions (`ToolModuleLookup`).
 * A module without `definitions` or `lookups` loads as before, with none. A bad tool, definition or lookup
 * stops the role at start, naming the field.
 */
export async function loadToolModule(modulePath: string): Promise<ToolModule> {
  const tools = await loadToolRegistry(modulePath);
  // The same evaluation as loadToolRegistry's (importModuleFile loads a file once): its other exports.
  const mod = await importModuleFile(modulePath, 'SAGA_TOOLS');
  if (mod.definitions !== undefined && !Array.isArray(mod.definitions))
    throw new SagaDefinitionError(
      '(module)',
      'definitions',
      `${modulePath} must export definitions as an array of saga definitions`,
    );
  return {
    tools,
    definitions: createSagaRegistry(tools, (mod.definitions as unknown[] | undefined) ?? []),
    lookups: lookupsOf(modulePath, mod.lookups),
  };
}

/** The module's `lookups`: an object whose every value is a function, or absent. */
function lookupsOf(modulePath: string, raw: unknown): ToolModuleLookups {
  if (raw === undefined) return Object.freeze({});
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new SagaDefinitionError(
      '(module)',
      'lookups',
      `${modulePath} must export lookups as an object of named read functions`,
    );
  const out: Record<string, ToolModuleLookup> = {};
  for (const [name, fn] of Object.entries(raw)) {
    if (typeof fn !== 'function')
      throw new SagaDefinitionError('(module)', `lookups.${name}`, 'must be a function (id, ctx)');
    out[name] = fn as ToolModuleLookup;
  }
  return Object.freeze(out);
}
