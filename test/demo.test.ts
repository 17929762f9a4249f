/**
 * `pnpm demo` and `pnpm demo:pivot` as smoke tests: each whole story (sandbox, dispatcher roles,
 * reconciler and compensator as real processes; the scripted agents; the operator) must exit 0 and print
 * its key lines. Each runs in its own schema so that a person's demo on the same database does not collide
 * with it; the two run one after the other (one file), so they do not compete for the same cores.
 */
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function runDemo(
  schema: string,
  args: readonly string[] = [],
): Promise<{ code: number | null; output: string }> {
  return new Promise((res, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', resolve(root, 'examples/demo/run-demo.ts'), ...args],
      {
        cwd: root,
        env: { ...process.env, DEMO_DB_SCHEMA: schema },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    // A test that times out must not leave the demo's processes behind: SIGINT makes it stop them all.
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.once('error', reject);
    child.once('exit', (code) => res({ code, output }));
  });
}

describe('pnpm demo', () => {
  it('tells the story: one ticket and one charge undone by the harness, the naive damage beside it', async () => {
    const { code, output } = await runDemo('saga_demo_test');
    expect(output).toContain('The story came out as told');
    expect(code).toBe(0);
    // Bound to the built-in definition; COMPENSATED only once its invariant held against Stripe and the
    // warehouse (no live shipment, no net charge).
    expect(output).toContain('definition:   refund_and_reship@1');
    expect(output).toContain('status:       COMPENSATED');
    expect(output).toMatch(/step \d+ charge_card .*\(definition step charge_card\)/);
    expect(output).toMatch(/tickets created\s+1\s+2\n/);
    expect(output).toMatch(/tickets still open\s+0\s+1\n/);
    expect(output).toMatch(/charges\s+1\s+2\n/);
    expect(output).toMatch(/refunds\s+1\s+1\n/);
    expect(output).toMatch(/money still taken\s+0\.00 EUR\s+49\.00 EUR\n/);
    expect(output).toMatch(/emails to the customer\s+0\s+1\n/);
    expect(output).toContain('ghost close:');
    // Why 150 s: the demo takes 30–45 s here, and its roles may take up to 90 s to boot on a loaded machine.
  }, 150_000);
});

describe('pnpm demo:pivot', () => {
  it('approved once: the commit steps run by themselves; rejected once: the run unwinds, nothing sent', async () => {
    const { code, output } = await runDemo('saga_demo_pivot_test', ['--pivot']);
    expect(output).toContain('The story came out as told');
    expect(code).toBe(0);
    // Before the pivot: the irreversible send is refused; the proposal is one approval with a hash.
    expect(output).toMatch(/calls send_email → 409 PIVOT_REQUIRED/);
    expect(output).toMatch(/\/pivot → 202 \{.*"approvalId":".+","hash":"[0-9a-f]{64}"/);
    expect(output).toMatch(/hash {6}[0-9a-f]{64}\n/);
    expect(output).toMatch(/deadline {2}\S+Z \(in /);
    // The refusals, then the decisions with who made them.
    expect(output).toContain('409 APPROVAL_HASH_MISMATCH');
    expect(output).toContain('403 FORBIDDEN');
    expect(output).toContain('→ 200 approved by demo-operator');
    expect(output).toContain('→ 200 rejected by demo-operator');
    expect(output).toMatch(/→ COMPLETED: /);
    expect(output).toMatch(/→ COMPENSATED: /);
    // Run-level events in the timelines.
    expect(output).toMatch(/run\s+run_transition\s+RUNNING → AWAITING_APPROVAL/);
    expect(output).toMatch(/run\s+decision\s+pending → approved .*\[by demo-operator\]/);
    expect(output).toMatch(/run\s+decision\s+pending → rejected .*\[by demo-operator\]/);
    // The summary: approved → one capture, the ticket open, one email; rejected → hold cancelled, none.
    expect(output).toMatch(/approved\s+rejected\n/);
    expect(output).toMatch(/card holds cancelled\s+0\s+1\n/);
    expect(output).toMatch(/captures\s+1\s+0\n/);
    expect(output).toMatch(/money taken\s+49\.00 EUR\s+0\.00 EUR\n/);
    expect(output).toMatch(/tickets open\s+1\s+0\n/);
    expect(output).toMatch(/ticket drafts\s+0\s+0\n/);
    expect(output).toMatch(/emails to the customer\s+1\s+0\n/);
  }, 150_000);
});
