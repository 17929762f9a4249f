/**
 * The simulation's lanes (size-lanes-to-machine.ts): a fixed limit is never exceeded; sized to the machine,
 * the limit grows while a cohort's median settle time stays near the least seen, sheds lanes once it
 * climbs well past it, and judges a cohort only by the episodes started in it.
 */
import { describe, expect, it } from 'vitest';
import {
  adaptiveLanes,
  createLanes,
  describeLaneChange,
  describeLanes,
  fixedLanes,
  type LaneTicket,
  type Lanes,
} from '../src/size-lanes-to-machine.js';

const turn = () => new Promise<void>((r) => setImmediate(r));

/** Starts `n` episodes (each as soon as a lane is free) and settles them in `settledMs(i)`. */
async function playCohort(lanes: Lanes, n: number, settledMs: (i: number) => number): Promise<void> {
  for (let i = 0; i < n; i++) lanes.release(await lanes.acquire(), settledMs(i));
}

/** Plays cohorts of 32 (the default cohort) until `count` have been judged. */
async function playCohorts(lanes: Lanes, count: number, settledMs: (cohort: number, i: number) => number) {
  for (let c = 0; c < count; c++) await playCohort(lanes, 32, (i) => settledMs(c, i));
}

/** Around `ms`, spread ±20 % over a cohort as a mix of episodes would be. */
const around = (ms: number) => (_: number, i: number) => ms * (0.8 + (0.4 * ((i * 7) % 32)) / 31);

describe('lanes fixed by --concurrency', () => {
  it('keeps at most the limit in flight and admits the waiting in turn as lanes free', async () => {
    const lanes = fixedLanes(2);
    const a = await lanes.acquire();
    const b = await lanes.acquire();
    const admitted: [number, LaneTicket][] = [];
    void lanes.acquire().then((t) => admitted.push([3, t]));
    void lanes.acquire().then((t) => admitted.push([4, t]));
    await turn();
    expect(admitted).toEqual([]);
    lanes.release(a, 1_000);
    await turn();
    expect(admitted.map(([n]) => n)).toEqual([3]);
    lanes.release(b, 60_000);
    await turn();
    expect(admitted.map(([n]) => n)).toEqual([3, 4]);
    for (const [, t] of admitted) lanes.release(t, 1_000);
    // However slow the episodes, a fixed limit never moves.
    await playCohorts(lanes, 3, () => 90_000);
    expect(lanes.limit).toBe(2);
    expect(describeLanes(lanes)).toBe('lanes: 2 in flight throughout');
  });
});

describe('lanes sized to the machine', () => {
  it('starts at 16 and grows to its bound while the settle time stays near the least seen', async () => {
    const lanes = adaptiveLanes(64);
    expect(lanes.limit).toBe(16);
    await playCohorts(lanes, 8, around(4_000));
    expect(lanes.limit).toBe(64);
    expect(lanes.decisions.map((d) => d.to)).toEqual([22, 30, 40, 54, 64]);
    expect(describeLanes(lanes)).toMatch(/^lanes: 16 at the start, 64 at the end, 16–64 over 5 changes/);
  });

  it('sheds a quarter of its lanes when the settle time climbs past 1.9× the least seen, not below 8', async () => {
    const lanes = adaptiveLanes(64);
    await playCohorts(lanes, 3, around(4_000));
    expect(lanes.limit).toBe(40);
    await playCohort(lanes, 32, () => 8_000);
    expect(lanes.limit).toBe(30);
    await playCohorts(lanes, 10, () => 20_000);
    expect(lanes.limit).toBe(8);
    expect(lanes.decisions.at(-1)).toMatchObject({ to: 8, medianMs: 20_000 });
  });

  it('holds between the two, and grows again once the machine recovers', async () => {
    const lanes = adaptiveLanes(64);
    await playCohorts(lanes, 2, around(4_000));
    expect(lanes.limit).toBe(30);
    // 1.6–1.8× the base: neither room nor overload.
    await playCohorts(lanes, 3, () => 6_800);
    expect(lanes.limit).toBe(30);
    await playCohort(lanes, 32, () => 4_000);
    expect(lanes.limit).toBe(40);
  });

  it('never grows past a 10 s median, and sheds past 14 s, however slow the first cohorts were', async () => {
    const changes: string[] = [];
    const lanes = adaptiveLanes(64, (d) => changes.push(describeLaneChange(d)));
    await playCohort(lanes, 32, () => 9_000);
    expect(lanes.limit).toBe(22);
    // Within 1.5× the least seen, but past 10 s: hold.
    await playCohorts(lanes, 2, () => 11_000);
    expect(lanes.limit).toBe(22);
    // Within 1.9× the least seen (aged 2 % a cohort since), but past 14 s: shed.
    await playCohort(lanes, 32, () => 15_000);
    expect(lanes.limit).toBe(16);
    expect(changes).toEqual([
      'lanes 16 → 22 (cohort median 9.0 s, least 9.0 s)',
      'lanes 22 → 16 (cohort median 15.0 s, least 9.6 s)',
    ]);
  });

  it('judges a cohort only by the episodes started in it, once most of them have settled', async () => {
    const lanes = createLanes({ min: 2, start: 4, max: 16, cohort: 8 });
    await playCohort(lanes, 8, () => 1_000);
    expect(lanes.limit).toBe(6);
    // The next cohort: 6 start, 2 settle, 2 more start: the cohort is full.
    const cohort: LaneTicket[] = [];
    for (let i = 0; i < 6; i++) cohort.push(await lanes.acquire());
    for (const t of cohort.splice(0, 2)) lanes.release(t, 900);
    cohort.push(await lanes.acquire(), await lanes.acquire());
    for (const t of cohort.splice(0, 3)) lanes.release(t, 900);
    // An episode started after the cohort filled does not count towards it...
    lanes.release(await lanes.acquire(), 100);
    expect(lanes.limit).toBe(6);
    // ...the cohort is judged at its sixth of eight, the two still running ranked slowest.
    lanes.release(cohort.shift()!, 900);
    expect(lanes.limit).toBe(8);
    expect(lanes.decisions.at(-1)).toMatchObject({ from: 6, to: 8, medianMs: 900 });
    // The judged cohort's stragglers count in no later cohort: the next one starts from nothing.
    for (const t of cohort.splice(0)) lanes.release(t, 50_000);
    await playCohort(lanes, 7, () => 900);
    expect(lanes.limit).toBe(8);
    await playCohort(lanes, 1, () => 900);
    expect(lanes.limit).toBe(11);
  });
});
