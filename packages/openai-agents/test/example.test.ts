/**
 * `pnpm example:openai-agents` as a smoke test: the whole example (sandbox, dispatcher roles and reconciler
 * as real processes, the scripted model behind the Agents SDK's runner, the operator's approval and the
 * resume from the SDK's `RunState`) must exit 0 and print the run's ledger with one ticket, one charge and
 * one email. Its own schema, and never a real model (OPENAI_API_KEY empty).
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { startExampleProcess } from '../../../test/fixtures/example-process.js';

describe('pnpm example:openai-agents', () => {
  it('ends with one ticket, one charge and one email in the sandbox ledger', async () => {
    const example = startExampleProcess('examples/openai-agents.ts', {
      EXAMPLE_DB_SCHEMA: 'saga_openai_agents_example_test',
      OPENAI_API_KEY: '',
    });
    onTestFinished(() => example.stop());
    const { code, output } = await example.finished;
    // The lost answer, the same call again until it settles, and the replanned ticket refused.
    expect(output).toMatch(
      /create_ticket +→ \{"status":"UNKNOWN"[^\n]*\n(?:.*UNKNOWN.*\n)*.*create_ticket +→ \{"status":"CONFIRMED","stepIdx":0/,
    );
    expect(output).toContain('"code":"DUPLICATE_OPERATION"');
    expect(output).toMatch(/send_email is held in agent-saga: approval apr_/);
    expect(output).toContain("the run resumes from its RunState with the harness's decision");
    expect(output).toMatch(/Jira tickets:\s+1 .*\n\s+Stripe charges:\s+1 .*\n\s+emails sent:\s+1\n/);
    expect(code).toBe(0);
    // Why 150 s: as the AI SDK example's test (10–15 s alone, far longer on a loaded two-core machine).
  }, 150_000);
});
