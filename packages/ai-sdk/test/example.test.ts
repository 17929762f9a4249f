/**
 * `pnpm example:ai-sdk` as a smoke test: the whole example (sandbox, dispatcher roles and reconciler as
 * real processes, the scripted model in a `generateText` loop, the operator's approval) must exit 0 and
 * print the run's ledger with one ticket, one charge and one email. It runs in a schema of its own, so a
 * person's run of the example on the same database does not collide with it, and never with a real model.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

function runExample(): Promise<{ code: number | null; output: string }> {
  return new Promise((res, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(root, 'examples/ai-sdk-agent.ts')], {
      cwd: root,
      env: { ...process.env, EXAMPLE_DB_SCHEMA: 'saga_ai_sdk_example_test', OPENAI_API_KEY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.once('error', reject);
    child.once('exit', (code) => res({ code, output }));
  });
}

describe('pnpm example:ai-sdk', () => {
  it('ends with one ticket, one charge and one email in the sandbox ledger', async () => {
    const { code, output } = await runExample();
    expect(output).toContain('"status":"UNKNOWN"');
    expect(output).toContain('"code":"DUPLICATE_OPERATION"');
    expect(output).toContain('send_email is held in agent-saga');
    expect(output).toMatch(/Jira tickets:\s+1 /);
    expect(output).toMatch(/Stripe charges:\s+1 /);
    expect(output).toMatch(/emails sent:\s+1\n/);
    expect(output).toContain('each effect exactly once');
    expect(code).toBe(0);
    // Why 150 s: the example takes 10–30 s alone and twice that beside other tests on two cores; its
    // roles may take far longer to boot on a loaded machine (the demo's smoke test allows as much).
  }, 150_000);
});
