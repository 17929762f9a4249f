import { createLogger, createToolRegistry, type AnyTool } from '@agent-saga/core';
import type { ApiHarness } from '../../dispatcher/test/api-harness.js';
import { EFFECT_TOOLS } from '../../../test/fixtures/dispatcher-processes.js';
import { createUnwindGroups, loadCompensatorConfig, type UnwindDeps } from '../src/index.js';

/**
 * An in-test compensator: the role's own unwind code (`driveRun` takes these deps) on the harness's schema
 * and tools, named `workerId`, with the role's config read from the harness's environment plus `env`.
 */
export function inTestCompensator(
  h: ApiHarness,
  o: {
    readonly workerId: string;
    readonly env?: Readonly<Record<string, string>>;
    readonly tools?: readonly AnyTool[];
    readonly shutdown?: AbortSignal;
  },
): UnwindDeps {
  return {
    db: h.env.db,
    schema: h.env.schema,
    registry: createToolRegistry(o.tools ?? h.tools),
    config: loadCompensatorConfig({ ...h.env.env, ...o.env, SAGA_TOOLS: EFFECT_TOOLS }),
    workerId: o.workerId,
    groups: createUnwindGroups(h.env.db, o.workerId),
    crash: () => undefined,
    logger: createLogger({ level: 'silent', name: o.workerId }),
    shutdownSignal: o.shutdown ?? new AbortController().signal,
  };
}
