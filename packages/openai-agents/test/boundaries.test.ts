/**
 * The package's boundary, as the lint checks it: `@agent-saga/openai-agents` reaches the harness only through
 * `@agent-saga/client` (HTTP), never core or a service, so an agent backend pulls in no Postgres driver.
 * The snippets are linted at a real path of the package, never written to disk.
 */
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../..');
const ZONE_RULE = 'import-x/no-restricted-paths';
const lint = new ESLint({
  cwd: ROOT,
  ruleFilter: ({ ruleId }) => ruleId === ZONE_RULE,
  overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
});

async function zoneMessages(code: string): Promise<string[]> {
  const [result] = await lint.lintText(code, { filePath: join(ROOT, 'packages/openai-agents/src/probe.ts') });
  return (result?.messages ?? []).filter((m) => m.ruleId === ZONE_RULE).map((m) => m.message);
}

describe('@agent-saga/openai-agents imports', () => {
  it('core and the services are reported; the client is not', async () => {
    expect(
      await zoneMessages("import { createDb } from '@agent-saga/core';\nexport const x = createDb;\n"),
    ).toEqual([expect.stringContaining('through @agent-saga/client')]);
    expect(
      await zoneMessages("import { buildApi } from '@agent-saga/dispatcher';\nexport const x = buildApi;\n"),
    ).not.toEqual([]);
    expect(
      await zoneMessages(
        "import { createSagaClient } from '@agent-saga/client';\nexport const x = createSagaClient;\n",
      ),
    ).toEqual([]);
  });
});
