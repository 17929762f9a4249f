import { ToolDefinitionError } from '../errors/errors.js';
import { importModuleFile } from './import-module-file.js';
import { createToolRegistry, type ToolRegistry } from './tool-registry.js';

/**
 * Loads the tool module named by `SAGA_TOOLS`: an ES module whose default export is an array of tools.
 * The dispatcher and the executor load the same module, so both see the same definitions.
 */
export async function loadToolRegistry(modulePath: string): Promise<ToolRegistry> {
  const mod = await importModuleFile(modulePath, 'SAGA_TOOLS');
  if (!Array.isArray(mod.default))
    throw new ToolDefinitionError(
      '(module)',
      'SAGA_TOOLS',
      `${modulePath} must export default an array of tools`,
    );
  return createToolRegistry(mod.default);
}
