/**
 * The unwind's order around a compensation held for a person (`awaiting_approval`), as `planUnwind`
 * decides it from the rows: the rest of the unwind goes on, the compensations that must run after the held
 * one (the steps it depends on) wait with it, and the run is not settled until it is decided.
 */
import { describe, expect, it } from 'vitest';
import { CompensationStatus, type CompensationRow, type StepRow } from '@agent-saga/core';
import { planUnwind } from '../src/index.js';

const NOW = new Date('2026-12-01T12:00:00Z');

/** A confirmed step `i`, depending on `dependsOn` (null: every earlier step). */
const step = (i: number, dependsOn: number[] | null = null): StepRow =>
  ({
    run_id: 'r',
    step_idx: i,
    tool: `tool_${i}`,
    status: 'CONFIRMED',
    audience: ['agent'],
    depends_on: dependsOn,
  }) as unknown as StepRow;

const comp = (i: number, status: CompensationStatus): CompensationRow =>
  ({
    run_id: 'r',
    step_idx: i,
    status,
    next_attempt_at: null,
    lease_until: null,
    attempts: 0,
  }) as unknown as CompensationRow;

const comps = (...rows: CompensationRow[]) => new Map(rows.map((c) => [c.step_idx, c]));
const readyOf = (p: ReturnType<typeof planUnwind>) => p.ready.map((c) => c.step_idx);

describe('a held compensation in the unwind order', () => {
  it('holds back the steps it must be undone before (default order), and the run is not settled', () => {
    const plan = planUnwind(
      [step(0), step(1), step(2)],
      comps(
        comp(0, CompensationStatus.PENDING),
        comp(1, CompensationStatus.AWAITING_APPROVAL),
        comp(2, CompensationStatus.PENDING),
      ),
      NOW,
    );
    // Step 2 depends on 1 and 0: it goes first. Step 0 must wait for 1, which waits for a person.
    expect(readyOf(plan)).toEqual([2]);
    expect(plan.settled).toBe(false);
    expect(plan.awaitingPeople).toBe(true);

    const after = planUnwind(
      [step(0), step(1), step(2)],
      comps(
        comp(0, CompensationStatus.PENDING),
        comp(1, CompensationStatus.AWAITING_APPROVAL),
        comp(2, CompensationStatus.COMPENSATED),
      ),
      NOW,
    );
    expect(readyOf(after)).toEqual([]);
    expect(after).toMatchObject({ settled: false, awaitingPeople: true, nextDueAt: null });
  });

  it('lets an independent step be undone while the held one waits', () => {
    const plan = planUnwind(
      [step(0, []), step(1, []), step(2, [1])],
      comps(
        comp(0, CompensationStatus.PENDING),
        comp(1, CompensationStatus.AWAITING_APPROVAL),
        comp(2, CompensationStatus.COMPENSATED),
      ),
      NOW,
    );
    expect(readyOf(plan)).toEqual([0]);
    expect(plan.settled).toBe(false);
  });

  it('once decided (approved: pending again) it is ready, and the run settles only after it', () => {
    const plan = planUnwind(
      [step(0), step(1)],
      comps(comp(0, CompensationStatus.PENDING), comp(1, CompensationStatus.PENDING)),
      NOW,
    );
    expect(readyOf(plan)).toEqual([1]);
    expect(plan.awaitingPeople).toBe(false);
  });
});
