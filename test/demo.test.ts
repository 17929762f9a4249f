/**
 * `pnpm demo` as a smoke test: the whole story (sandbox, dispatcher roles, reconciler and compensator as
 * real processes; the scripted agent; the naive agent) must exit 0 and print both ledgers' counts. Runs in
 * its own schema so that a person's `pnpm demo` on the same database does not collide with it.
 */
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function runDemo(): Promise<{ code: number | null; output: string }> {
  return new Promise((res, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(root, 'examples/demo/run-demo.ts')], {
      cwd: root,
      env: { ...process.env, DEMO_DB_SCHEMA: 'saga_demo_test' },
      stdio: ['ignore', 'pipe', 'pipe'],
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
    const { code, output } = await runDemo();
    expect(output).toContain('The story came out as told');
    expect(code).toBe(0);
    expect(output).toContain('status:       COMPENSATED');
    expect(output).toMatch(/tickets created\s+1\s+2\n/);
    expect(output).toMatch(/tickets still open\s+0\s+1\n/);
    expect(output).toMatch(/charges\s+1\s+2\n/);
    expect(output).toMatch(/refunds\s+1\s+1\n/);
    expect(output).toMatch(/money still taken\s+0\.00 EUR\s+49\.00 EUR\n/);
    expect(output).toMatch(/emails to the customer\s+0\s+1\n/);
    expect(output).toContain('ghost close:');
  }, 90_000);
});
