/**
 * The naive harness under the newer episodes, against a real sandbox and the real connectors: its own
 * process crash after the vendor answered (the process modes) redoes the write its transcript lacks, which
 * Jira doubles and a keyed vendor replays; and the hold workflow's capture takes the id the hold answered.
 */
import { sandboxConnectorEnv, startSandbox, type RunningSandbox } from '@agent-saga/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drawEpisode, type Episode } from '../src/draw-episodes.js';
import { FaultMode, faultSpecsOf, type EpisodeFault } from '../src/fault-modes.js';
import { createNaiveToolbox, naivePort, type NaiveToolbox } from '../src/naive-harness.js';
import { seedEpisodes } from '../src/run-harness.js';
import { SEARCH_LAG_MS } from '../src/sim-timings.js';
import { episodeIds, pivotAt, Workflow, writesOf } from '../src/support-workflows.js';

let sandbox: RunningSandbox;
let box: NaiveToolbox;

beforeAll(async () => {
  sandbox = await startSandbox();
  box = createNaiveToolbox(sandboxConnectorEnv(sandbox, { lagMs: SEARCH_LAG_MS, toolsModule: 'unused' }));
});
afterAll(async () => {
  await box.close();
  await sandbox.close();
});

/** Episode `index` of seed 990 made into `workflow`, with `faults` and no policy. */
function episode(index: number, workflow: Workflow, faults: readonly EpisodeFault[]): Episode {
  const ids = episodeIds(990, index, 'TEE-L');
  const e: Episode = {
    ...drawEpisode(990, index),
    ids,
    workflow,
    writes: writesOf(workflow, ids),
    pivotAt: pivotAt(workflow),
    refused: false,
    faults,
    policies: [],
    crashAfterWrite: undefined,
  };
  seedEpisodes(sandbox, [e]);
  for (const f of faults)
    for (const spec of faultSpecsOf(f, e.writes[f.write]!, ids.tag, 'unused')) sandbox.admin.addFault(spec);
  return e;
}

const call = (e: Episode, port: ReturnType<typeof naivePort>, write: number) =>
  port.call(write, e.writes[write]!.tool, e.writes[write]!.args(1, false));

describe('the naive harness', () => {
  it('redoes a write after its own crash: Jira gets two tickets, the keyed reship one shipment', async () => {
    const faults = [
      { mode: FaultMode.EXECUTOR_KILLED, write: 0, delayMs: 100 },
      { mode: FaultMode.API_RESTART, write: 1, delayMs: 100 },
    ];
    const e = episode(1, Workflow.TICKET_AND_RESHIP, faults);
    const port = naivePort(box, e);
    expect(await call(e, port, 0)).toMatchObject({ kind: 'done' });
    expect(await call(e, port, 1)).toMatchObject({ kind: 'done' });
    const ledger = sandbox.admin.ledger();
    expect(ledger.jira.issues.filter((i) => i.summary.includes(e.ids.orderId))).toHaveLength(2);
    expect(ledger.shipping.shipments.filter((s) => s.orderId === e.ids.orderId)).toHaveLength(1);
  });

  it('captures the PaymentIntent the hold answered', async () => {
    const e = episode(2, Workflow.HOLD_RESHIP_CAPTURE_CONFIRM, []);
    const port = naivePort(box, e);
    const hold = await call(e, port, 1);
    const holdId = hold.kind === 'done' ? hold.ref : null;
    expect(holdId).toMatch(/^pi_/);
    expect(await call(e, port, 3)).toMatchObject({ kind: 'done' });
    const [pi] = sandbox.admin.ledger().stripe.paymentIntents.filter((p) => p.customer === e.ids.customerId);
    expect(pi).toMatchObject({ id: holdId, status: 'succeeded' });
  }, 30_000);
});
