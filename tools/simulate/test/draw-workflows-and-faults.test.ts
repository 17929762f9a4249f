/**
 * The episodes' newer workflows and fault modes, as drawn: tasks of up to five writes, the pivot workflow's
 * commit steps after its pivot, the faults each mode arms in the sandbox, and no fault aimed at a request
 * that carries no episode tag.
 */
import { describe, expect, it } from 'vitest';
import { drawEpisodes, drawSelectedEpisodes } from '../src/draw-episodes.js';
import { faultSpecsOf, FaultMode, ProcessFault } from '../src/fault-modes.js';
import { episodeIds, resolveRefs, Workflow, writesOf, WriteTool } from '../src/support-workflows.js';

const episodes = drawEpisodes(11, 600);

describe('the episodes a run plays', () => {
  it('are the first N, or the listed ones (`--only`) exactly as a full draw has them', () => {
    expect(drawSelectedEpisodes(11, { episodes: 600 }).map((e) => e.ids.tag)).toEqual(
      episodes.map((e) => e.ids.tag),
    );
    const only = drawSelectedEpisodes(11, { episodes: 2, only: [417, 3] });
    expect(only.map((e) => e.index)).toEqual([417, 3]);
    expect(only.map((e) => [e.workflow, e.faults, e.policies, e.ids.tag])).toEqual(
      [episodes[417]!, episodes[3]!].map((e) => [e.workflow, e.faults, e.policies, e.ids.tag]),
    );
  });
});

describe('the workflows drawn', () => {
  it('need 1 to 5 writes, and every workflow is drawn', () => {
    const k = new Set(episodes.map((e) => e.writes.length));
    expect(Math.min(...k)).toBe(1);
    expect(Math.max(...k)).toBe(5);
    expect(new Set(episodes.map((e) => e.workflow))).toEqual(new Set(Object.values(Workflow)));
  });

  it('put the pivot before the capture, and the agent’s own crash before the pivot', () => {
    for (const e of episodes.filter((x) => x.workflow === Workflow.REFUND_AND_RESHIP_PIVOT)) {
      expect(e.pivotAt).toBe(2);
      expect(e.writes.slice(e.pivotAt).map((w) => w.tool)).toEqual([
        WriteTool.CAPTURE_PAYMENT,
        WriteTool.RESHIP,
        WriteTool.SEND_EMAIL,
      ]);
      if (e.crashAfterWrite !== undefined) expect(e.crashAfterWrite).toBeLessThan(2);
    }
    expect(
      episodes.filter((e) => e.pivotAt !== undefined && e.workflow !== Workflow.REFUND_AND_RESHIP_PIVOT),
    ).toEqual([]);
  });

  it('name the hold in the capture’s arguments, filled in from what the agent knows', () => {
    const writes = writesOf(Workflow.HOLD_RESHIP_CAPTURE_CONFIRM, episodeIds(1, 1, 'TEE-L'));
    const capture = writes[3]!.args(1, false);
    expect(resolveRefs(capture, (w) => (w === 1 ? 'pi_hold' : null))).toEqual({ paymentIntent: 'pi_hold' });
    expect(resolveRefs(capture, () => null)).toBeNull();
  });
});

describe('the fault modes drawn', () => {
  it('never aim a fault at a capture (its request carries no episode tag)', () => {
    for (const e of episodes)
      for (const f of e.faults)
        if (e.writes[f.write]?.tool === WriteTool.CAPTURE_PAYMENT) expect(f.mode).toBe(FaultMode.NONE);
  });

  it('include the partial batch and both process faults', () => {
    const modes = new Set(episodes.flatMap((e) => e.faults.map((f) => f.mode)));
    for (const m of [FaultMode.PARTIAL_BATCH, FaultMode.EXECUTOR_KILLED, FaultMode.API_RESTART])
      expect(modes).toContain(m);
  });

  it('arm a partial batch as a PaymentIntent created without its confirmation, then a 500', () => {
    const e = episodes.find((x) => x.faults.some((f) => f.mode === FaultMode.PARTIAL_BATCH))!;
    const f = e.faults.find((x) => x.mode === FaultMode.PARTIAL_BATCH)!;
    const w = e.writes[f.write]!;
    expect([WriteTool.CHARGE_CARD, WriteTool.AUTHORIZE_PAYMENT]).toContain(w.tool);
    expect(faultSpecsOf(f, w, e.ids.tag, 'k')).toEqual([
      expect.objectContaining({ kind: 'partial_batch', omit: ['confirm'], status: 500, contains: e.ids.tag }),
    ]);
  });

  it('arm a process fault as an answer held after processing, noting what the harness kills', () => {
    for (const [mode, note] of [
      [FaultMode.EXECUTOR_KILLED, ProcessFault.KILL_SENDER],
      [FaultMode.API_RESTART, ProcessFault.KILL_API],
    ] as const) {
      const e = episodes.find((x) => x.faults.some((f) => f.mode === mode))!;
      const f = e.faults.find((x) => x.mode === mode)!;
      const [spec] = faultSpecsOf(f, e.writes[f.write]!, e.ids.tag, 'k');
      expect(spec).toMatchObject({ kind: 'delay', phase: 'after_processing', note, nth: 1 });
      expect(spec?.delayMs).toBeGreaterThan(0);
    }
  });
});
