import { SagaDefinitionError } from '../errors/errors.js';
import { ToolClass } from '../tools/tool-class.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { ancestorsOf } from './dependency-order.js';
import { defineSaga, pivotStepOf, sagaLabel, type SagaDefinition, type SagaSpec } from './define-saga.js';

/** The saga definitions a process knows, each checked against the tools it was registered with. */
export interface SagaRegistry {
  /** The tools every definition here was checked against. */
  readonly tools: ToolRegistry;
  /** `name` at `version`, or its highest registered version when none is given; undefined when unknown. */
  get(name: string, version?: number): SagaDefinition | undefined;
  /** The registered versions of `name`, lowest first (empty when unknown). */
  versions(name: string): readonly number[];
  /** Every definition, by name, then by version, lowest first. */
  list(): readonly SagaDefinition[];
}

/**
 * Builds the registry of a process's saga definitions against its tools, refusing at start, with the field
 * named, a definition whose step names a tool that is not registered (`steps[2].tool`), whose irreversible
 * step does not stand after the pivot, or that has irreversible steps and no pivot, a pure pivot, and a
 * name and version registered twice. Each definition is re-validated (`defineSaga`: shape, repeated step
 * ids, missing or circular dependencies, several pivots), so a plain object gets the same checks.
 */
export function createSagaRegistry(tools: ToolRegistry, definitions: readonly unknown[]): SagaRegistry {
  if (!Array.isArray(definitions))
    throw new SagaDefinitionError('(registry)', 'definitions', 'must be an array of saga definitions');
  const byName = new Map<string, Map<number, SagaDefinition>>();
  for (const raw of definitions) {
    const def = defineSaga(raw as SagaSpec);
    checkAgainstTools(def, tools);
    const versions = byName.get(def.name) ?? new Map<number, SagaDefinition>();
    if (versions.has(def.version))
      throw new SagaDefinitionError(sagaLabel(def), 'version', 'is registered twice');
    versions.set(def.version, def);
    byName.set(def.name, versions);
  }
  const sortedVersions = (name: string): number[] =>
    [...(byName.get(name)?.keys() ?? [])].sort((a, b) => a - b);
  const all = [...byName.keys()]
    .sort()
    .flatMap((name) => sortedVersions(name).map((v) => byName.get(name)!.get(v)!));
  return Object.freeze({
    tools,
    get(name: string, version?: number) {
      const versions = byName.get(name);
      if (!versions) return undefined;
      if (version !== undefined) return versions.get(version);
      return versions.get(Math.max(...versions.keys()));
    },
    versions: (name: string) => sortedVersions(name),
    list: () => all,
  });
}

/**
 * Every step's tool is registered; an irreversible step is the pivot or stands after it (depends on it,
 * directly or not), so a pivot approval covers it before it runs; the pivot has an effect to commit.
 */
function checkAgainstTools(def: SagaDefinition, tools: ToolRegistry): void {
  const fail = (field: string, message: string): never => {
    throw new SagaDefinitionError(sagaLabel(def), field, message);
  };
  def.steps.forEach((step, i) => {
    if (!tools.get(step.tool))
      fail(`steps[${i}].tool`, `names tool ${JSON.stringify(step.tool)}, which is not registered`);
  });
  const pivot = pivotStepOf(def);
  const pivotIdx = pivot ? def.steps.indexOf(pivot) : -1;
  if (pivot && tools.get(pivot.tool)?.class === ToolClass.PURE)
    fail(`steps[${pivotIdx}].pivot`, `${pivot.tool} is pure: a pivot must commit an effect`);
  def.steps.forEach((step, i) => {
    if (tools.get(step.tool)?.class !== ToolClass.IRREVERSIBLE || step === pivot) return;
    if (!pivot)
      fail(
        `steps[${i}].tool`,
        `${step.tool} is irreversible and the saga has no pivot: mark the step from which the run only ` +
          'rolls forward `pivot: true`, with every irreversible step after it',
      );
    if (ancestorsOf(def.steps, step.id).has(pivot!.id)) return;
    const before = ancestorsOf(def.steps, pivot!.id).has(step.id);
    fail(
      `steps[${i}].dependsOn`,
      `${step.tool} is irreversible and ${before ? 'stands before' : 'does not stand after'} the pivot ` +
        `(steps[${pivotIdx}], ${JSON.stringify(pivot!.id)}): it must depend on it, directly or not`,
    );
  });
}
