/**
 * An upstream MCP tool through the whole product: the MCP desk in the test process, the api, executors and
 * reconciler as real processes loading `fixtures/mcp-upstream-tools.ts` with the desk's mapping. The
 * desk commits `open_ticket` and loses the answer; the step is UNKNOWN, the reconciler's lookup by key
 * finds the ticket after the lag and confirms the step, and the desk holds one ticket, not two.
 */
import { resolve } from 'node:path';
import { ToolOutcomeUnknown } from '@agent-saga/client';
import { startMcpDesk, type RunningMcpDesk } from '@agent-saga/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './fixtures/dispatcher-processes.js';
import { writeDeskMapping } from './fixtures/mcp-desk-mapping.js';
import { startSupportHarness, type SupportHarness } from './fixtures/support-harness.js';

/** The desk's search lag, and what the lookups are told. Short, but a lookup right after the write misses. */
const LAG_MS = 400;
const TOOLS = resolve(import.meta.dirname, 'fixtures/mcp-upstream-tools.ts');

let desk: RunningMcpDesk;
let h: SupportHarness;

beforeAll(async () => {
  desk = await startMcpDesk({ lagMs: LAG_MS });
  const mapping = writeDeskMapping(desk.url, { lagMs: LAG_MS, timeoutMs: 3_000 });
  h = await startSupportHarness('mcp_upstream_flow', ['executor', 'reconciler'], {
    env: { SAGA_TOOLS: TOOLS, SAGA_MCP_UPSTREAMS: mapping },
  });
});
afterAll(async () => {
  await h?.close();
  await desk?.close();
});

describe('an upstream MCP tool through the dispatcher', () => {
  it('is listed with the upstream schema', async () => {
    const tools = await h.saga.listTools();
    const open = tools.find((t) => t.name === 'desk_open_ticket');
    expect(open).toMatchObject({ inputSchema: { required: ['subject', 'body'] } });
  });

  it('a lost answer becomes one ticket once the reconciler settles the step', async () => {
    const { runId } = await h.saga.createRun({});
    desk.failNext('reset_after');
    const args = { subject: `Lost answer ${runId}`, body: 'the desk made it, the answer was lost' };
    const first = await h.saga.call(runId, 'desk_open_ticket', args, { stepIdx: 0, waitMs: 5_000 }).then(
      (outcome) => outcome,
      (err: unknown) => err,
    );
    // The executor saw the reset: the step may have taken effect, so it is UNKNOWN, never FAILED.
    expect(first).toBeInstanceOf(ToolOutcomeUnknown);
    const step = await waitFor(
      'step 0 settled by the reconciler',
      async () => {
        const s = (await h.saga.getRun(runId)).steps[0];
        return s && s.status !== 'UNKNOWN' && s.status !== 'INTENDED' ? s : undefined;
      },
      20_000,
      100,
    );
    const made = desk.tickets().filter((t) => t.subject === args.subject);
    expect(made).toHaveLength(1);
    expect(step).toMatchObject({ status: 'CONFIRMED', externalRef: made[0]?.id, attempts: 1 });
    expect(made[0]?.openKey).toBe(step.idempotencyKey);
    // A retry of the step replays the confirmed outcome; the desk still holds one ticket.
    const retry = await h.saga.call(runId, 'desk_open_ticket', args, { stepIdx: 0, waitMs: 5_000 });
    expect(retry).toMatchObject({ status: 'CONFIRMED', externalRef: made[0]?.id, replayed: true });
    expect(desk.tickets().filter((t) => t.subject === args.subject)).toHaveLength(1);
  });
});
