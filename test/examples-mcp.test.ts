/**
 * `pnpm example:mcp` as a smoke test: the whole example (sandbox, dispatcher roles, reconciler and the MCP
 * gateway as real processes, the official MCP client over streamable HTTP with a bearer token) must exit 0
 * and print the run's ledger with one ticket and one charge, the ticket asked for again after its UNKNOWN.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { startExampleProcess } from './fixtures/example-process.js';

describe('pnpm example:mcp', () => {
  it('lists annotated tools; an UNKNOWN ticket asked again settles; one ticket and one charge', async () => {
    const example = startExampleProcess('examples/mcp/run-mcp-example.ts', {
      EXAMPLE_DB_SCHEMA: 'saga_mcp_example_test',
    });
    onTestFinished(() => example.stop());
    const { code, output } = await example.finished;
    expect(output).toMatch(/get_order +readOnly, idempotent\n/);
    expect(output).toMatch(/charge_card +destructive, idempotent, openWorld\n/);
    // UNKNOWN is a result the client acts on (not isError); the same call again lands on step 0.
    expect(output).toMatch(/create_ticket +→ \{"status":"UNKNOWN","stepIdx":0/);
    expect(output).toMatch(/create_ticket +→ \{"status":"CONFIRMED","stepIdx":0/);
    expect(output).not.toContain('isError');
    expect(output).toMatch(/Jira tickets:\s+1 .*\n\s+Stripe charges:\s+1 .*\n\s+emails sent:\s+0\n/);
    expect(code).toBe(0);
    // Why 150 s: five tsx processes boot in 10–15 s alone, far longer on a loaded two-core machine.
  }, 150_000);
});
