/**
 * `pnpm example:ai-sdk` as a smoke test: the whole example (sandbox, dispatcher roles and reconciler as
 * real processes, the scripted model in a `generateText` loop, the operator's approval) must exit 0 and
 * print the run's ledger with one ticket, one charge and one email. It runs in a schema of its own, so a
 * person's run of the example on the same database does not collide with it, and never with a real model.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { startExampleProcess } from '../../../test/fixtures/example-process.js';

describe('pnpm example:ai-sdk', () => {
  it('ends with one ticket, one charge and one email in the sandbox ledger', async () => {
    const example = startExampleProcess('examples/ai-sdk-agent.ts', {
      EXAMPLE_DB_SCHEMA: 'saga_ai_sdk_example_test',
      OPENAI_API_KEY: '',
    });
    onTestFinished(() => example.stop());
    const { code, output } = await example.finished;
    expect(output).toContain('create_ticket  → {"status":"UNKNOWN"');
    expect(output).toContain('"code":"DUPLICATE_OPERATION"');
    expect(output).toContain('send_email is held in agent-saga');
    expect(output).toContain("the loop resumes with the harness's decision");
    expect(output).toMatch(/Jira tickets:\s+1 .*\n\s+Stripe charges:\s+1 .*\n\s+emails sent:\s+1\n/);
    expect(output).toContain('one ticket, one charge, one email: each effect exactly once.');
    expect(code).toBe(0);
    // Why 150 s: the example takes 10–15 s alone and twice that beside other tests on two cores; its
    // roles may take far longer to boot on a loaded machine (the demo's smoke test allows as much).
  }, 150_000);
});
