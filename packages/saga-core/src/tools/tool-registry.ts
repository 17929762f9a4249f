import { ToolClass } from './tool-class.js';
import { ToolDefinitionError, ToolNotRegisteredError } from '../errors/errors.js';
import { defineTool, type AnyTool } from './define-tool.js';

export interface ToolRegistry {
  get(name: string): AnyTool | undefined;
  /** @throws ToolNotRegisteredError */
  require(name: string): AnyTool;
  list(): readonly AnyTool[];
}

/**
 * Builds a registry, refusing duplicate names and compensations that name an unregistered tool. Each tool
 * is re-validated (a plain object that skipped `defineTool` gets the same checks).
 */
export function createToolRegistry(tools: readonly unknown[]): ToolRegistry {
  if (!Array.isArray(tools))
    throw new ToolDefinitionError('(registry)', 'tools', 'must be an array of tools');
  const byName = new Map<string, AnyTool>();
  for (const raw of tools) {
    const tool: AnyTool = defineTool(raw as AnyTool);
    if (byName.has(tool.name)) throw new ToolDefinitionError(tool.name, 'name', 'is registered twice');
    byName.set(tool.name, tool);
  }
  for (const tool of byName.values()) {
    if (!tool.compensate) continue;
    const target = tool.compensationTool ?? probeCompensationTool(tool);
    if (target !== undefined && !byName.has(target))
      throw new ToolDefinitionError(
        tool.name,
        'compensate',
        `names tool ${JSON.stringify(target)}, which is not registered`,
      );
    if (target !== undefined && byName.get(target)?.class === ToolClass.PURE)
      throw new ToolDefinitionError(
        tool.name,
        'compensate',
        `names ${JSON.stringify(target)}, a pure tool, which undoes nothing`,
      );
  }
  return {
    get: (name) => byName.get(name),
    require(name) {
      const tool = byName.get(name);
      if (!tool) throw new ToolNotRegisteredError(name);
      return tool;
    },
    list: () => [...byName.values()],
  };
}

/**
 * Finds which tool a compensation names without real arguments: calls `compensate` with arguments whose
 * every field reads as a placeholder string. Most compensations only copy fields, so this names the target
 * and a typo is refused at registration; when the probe throws, the check happens when the step is taken.
 */
function probeCompensationTool(tool: AnyTool): string | undefined {
  const placeholder = (): unknown =>
    new Proxy(
      {},
      {
        get: (_t, prop) =>
          prop === Symbol.toPrimitive ? () => 'probe' : prop === 'toString' ? () => 'probe' : 'probe',
      },
    );
  try {
    const cmd = tool.compensate?.(placeholder(), 'probe-key');
    return cmd && typeof cmd.tool === 'string' ? cmd.tool : undefined;
  } catch {
    return undefined;
  }
}
