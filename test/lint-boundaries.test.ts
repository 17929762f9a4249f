import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint, type Linter } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The boundary rules of eslint.config.js bite: each kind of forbidden import, put at a real path of the
 * repository, is reported by the rule that forbids it, and a legal import is not.
 *
 * The import directions are checked with lintText on snippets that never touch the disk; the lint's type
 * information is switched off for them (no file to put in a TypeScript project, and the zones read resolved
 * paths, not types). The cycle rule reads the TypeScript program, so its modules are real files, written
 * into core's src under a folder of their own before the linter starts and removed after.
 */
const ROOT = join(import.meta.dirname, '..');
const ZONE_RULE = 'import-x/no-restricted-paths';
const CYCLE_RULE = 'local/no-import-cycle';

/** The repository's own config, only the boundary rules, without type information. */
const directions = new ESLint({
  cwd: ROOT,
  ruleFilter: ({ ruleId }) => ruleId === ZONE_RULE,
  overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
});

async function lintAt(path: string, code: string): Promise<Linter.LintMessage[]> {
  const [result] = await directions.lintText(code, { filePath: join(ROOT, path) });
  return result?.messages ?? [];
}

function reported(messages: Linter.LintMessage[]): { ruleId: string | null; message: string }[] {
  return messages.map((m) => ({ ruleId: m.ruleId, message: m.message }));
}

describe('import directions', () => {
  it('a service importing another service, by package or by path, is reported', async () => {
    const byPackage = await lintAt(
      'services/compensator/src/probe.ts',
      "import { buildApi } from '@agent-saga/dispatcher';\nexport const x = buildApi;\n",
    );
    expect(reported(byPackage)).toEqual([
      { ruleId: ZONE_RULE, message: expect.stringContaining('Services never import one another') as string },
    ]);
    const byPath = await lintAt(
      'services/reconciler/src/scan/probe.ts',
      "import { startCompensator } from '../../../compensator/src/index.js';\nexport const x = startCompensator;\n",
    );
    expect(reported(byPath)).toEqual([
      { ruleId: ZONE_RULE, message: expect.stringContaining('Services never import one another') as string },
    ]);
  });

  it('core importing a service or a connector is reported', async () => {
    const messages = await lintAt(
      'packages/saga-core/src/steps/probe.ts',
      [
        "import { startReconciler } from '@agent-saga/reconciler';",
        "import { stripeTools } from '@agent-saga/connectors';",
        'export const x = [startReconciler, stripeTools];',
        '',
      ].join('\n'),
    );
    expect(messages.map((m) => [m.ruleId, m.line])).toEqual([
      [ZONE_RULE, 1],
      [ZONE_RULE, 2],
    ]);
    expect(messages[0]?.message).toContain('Core imports no service and no connector');
  });

  it('production code importing the sandbox or a test helper is reported', async () => {
    const sandbox = await lintAt(
      'packages/connectors/src/stripe/probe.ts',
      "import { startSandbox } from '@agent-saga/sandbox';\nexport const x = startSandbox;\n",
    );
    expect(reported(sandbox)).toEqual([
      { ruleId: ZONE_RULE, message: expect.stringContaining('never imports the sandbox') as string },
    ]);
    const helpers = await lintAt(
      'services/dispatcher/src/api/probe.ts',
      [
        "import { createTestDb } from '@agent-saga/core/testing';",
        "import { startApiHarness } from '../../test/api-harness.js';",
        "import { effectsFor } from '../../../../test/fixtures/effect-tools.js';",
        'export const x = [createTestDb, startApiHarness, effectsFor];',
        '',
      ].join('\n'),
    );
    expect(helpers.map((m) => [m.ruleId, m.line])).toEqual([
      [ZONE_RULE, 1],
      [ZONE_RULE, 2],
      [ZONE_RULE, 3],
    ]);
    expect(helpers.every((m) => m.message.includes('never imports test helpers'))).toBe(true);
    // Core's own production files may not reach into its testing entry point by path either.
    const coreTesting = await lintAt(
      'packages/saga-core/src/tools/probe.ts',
      "import { createTestDb } from '../testing/index.js';\nexport const x = createTestDb;\n",
    );
    expect(coreTesting.map((m) => m.ruleId)).toEqual([ZONE_RULE]);
  });

  it('legal imports are not reported', async () => {
    const legal: [string, string][] = [
      ['services/compensator/src/probe.ts', "import { RunStatus } from '@agent-saga/core';"],
      ['services/compensator/src/worker/probe.ts', "import { loadCompensatorConfig } from '../config.js';"],
      [
        'packages/cli/src/probe.ts',
        "import { migrateConnectorTables } from '@agent-saga/connectors/migrations';",
      ],
      ['packages/saga-core/src/testing/probe.ts', "import { RunStatus } from '../runs/run-status.js';"],
      ['tools/sandbox/src/probe.ts', "import { startSandbox } from './index.js';"],
      // Tests may import anything, a service's tests another service's harness included.
      [
        'services/compensator/test/probe.ts',
        "import { startApiHarness } from '../../dispatcher/test/api-harness.js';",
      ],
    ];
    for (const [path, line] of legal) {
      expect({ path, messages: reported(await lintAt(path, `${line}\nexport const x = 1;\n`)) }).toEqual({
        path,
        messages: [],
      });
    }
  });
});

/** The agent-framework integrations: each reaches the harness only through the client, over HTTP. */
describe.each(['ai-sdk', 'openai-agents'])('@agent-saga/%s imports', (pkg) => {
  it('core and the services are reported; the client is not', async () => {
    const at = (code: string) => lintAt(`packages/${pkg}/src/probe.ts`, code).then(reported);
    expect(await at("import { createDb } from '@agent-saga/core';\nexport const x = createDb;\n")).toEqual([
      { ruleId: ZONE_RULE, message: expect.stringContaining('through @agent-saga/client') as string },
    ]);
    expect(
      await at("import { buildApi } from '@agent-saga/dispatcher';\nexport const x = buildApi;\n"),
    ).not.toEqual([]);
    expect(
      await at(
        "import { createSagaClient } from '@agent-saga/client';\nexport const x = createSagaClient;\n",
      ),
    ).toEqual([]);
  });
});

describe('import cycles', () => {
  /** Under core's src, so that core's tsconfig puts the files in its program and the rule watches them. */
  const DIR = 'packages/saga-core/src/__lint-cycle-probe__';
  const files: Record<string, string> = {
    // A runtime cycle: each module needs a value of the other.
    'value-a.ts': "import { b } from './value-b.js';\nexport const a = (): number => b() + 1;\n",
    'value-b.ts': "import { a } from './value-a.js';\nexport const b = (): number => a() - 1;\n",
    // A cycle of types only, through a third module: nothing of it exists at run time, it is still a cycle.
    'type-a.ts': "import type { B } from './type-b.js';\nexport interface A {\n  readonly b: B;\n}\n",
    'type-b.ts': "import type { C } from './type-c.js';\nexport interface B {\n  readonly c: C;\n}\n",
    'type-c.ts': "import type { A } from './type-a.js';\nexport interface C {\n  readonly a?: A;\n}\n",
    // No cycle: one direction only.
    'leaf.ts': 'export const leaf = 1;\n',
    'uses-leaf.ts': "import { leaf } from './leaf.js';\nexport const usesLeaf = leaf + 1;\n",
  };
  let results: Map<string, Linter.LintMessage[]>;

  beforeAll(async () => {
    mkdirSync(join(ROOT, DIR), { recursive: true });
    for (const [name, code] of Object.entries(files)) writeFileSync(join(ROOT, DIR, name), code);
    // Created after the files, so that the project service sees them in core's program.
    const eslint = new ESLint({ cwd: ROOT, ruleFilter: ({ ruleId }) => ruleId === CYCLE_RULE });
    const linted = await eslint.lintFiles(Object.keys(files).map((name) => join(ROOT, DIR, name)));
    results = new Map(linted.map((r) => [r.filePath.slice(ROOT.length + DIR.length + 2), r.messages]));
  }, 120_000);

  afterAll(() => rmSync(join(ROOT, DIR), { recursive: true, force: true }));

  it('reports a runtime cycle on both sides, naming the circle', () => {
    expect(reported(results.get('value-a.ts') ?? [])).toEqual([
      {
        ruleId: CYCLE_RULE,
        message: expect.stringContaining(
          `${DIR}/value-a.ts → ${DIR}/value-b.ts → ${DIR}/value-a.ts`,
        ) as string,
      },
    ]);
    expect(results.get('value-b.ts')?.map((m) => m.ruleId)).toEqual([CYCLE_RULE]);
  });

  it('reports a cycle of type-only imports on every module in it', () => {
    expect(reported(results.get('type-c.ts') ?? [])).toEqual([
      {
        ruleId: CYCLE_RULE,
        message: expect.stringContaining(
          `${DIR}/type-c.ts → ${DIR}/type-a.ts → ${DIR}/type-b.ts → ${DIR}/type-c.ts`,
        ) as string,
      },
    ]);
    expect(['type-a.ts', 'type-b.ts'].map((f) => results.get(f)?.map((m) => m.ruleId))).toEqual([
      [CYCLE_RULE],
      [CYCLE_RULE],
    ]);
  });

  it('does not report an import that goes one way', () => {
    expect(results.get('leaf.ts')).toEqual([]);
    expect(results.get('uses-leaf.ts')).toEqual([]);
  });
});
