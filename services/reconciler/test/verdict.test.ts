/** The pure parts of a reconcile: what lookups prove, how slots are shared. */
import { describe, expect, it } from 'vitest';
import { decideLookupVerdict as decideVerdict, type LookupObservation } from '@agent-saga/core';
import { createSlots } from '../src/reconcile/slots.js';

const at = new Date();
const found: LookupObservation = { kind: 'found', at, ms: 1, effect: { externalRef: 'X-1', result: {} } };
const absent: LookupObservation = { kind: 'absent', at, ms: 1 };
const failed: LookupObservation = { kind: 'error', at, ms: 1, error: { name: 'Error', message: '503' } };
const later = new Date(Date.now() + 5_000);

describe('decideVerdict', () => {
  it('believes "not found" only after the lag and a re-check', () => {
    expect(decideVerdict([absent, absent], { passed: true, believableAt: at })).toEqual({ kind: 'absent' });
    expect(decideVerdict([absent], { passed: false, believableAt: later })).toEqual({
      kind: 'too-early',
      believableAt: later,
    });
    // One lookup after the lag is not enough.
    expect(decideVerdict([absent], { passed: true, believableAt: at }).kind).toBe('too-early');
  });

  it('takes the last lookup: found on the re-check confirms, a failed re-check learns nothing', () => {
    expect(decideVerdict([absent, found], { passed: true, believableAt: at }).kind).toBe('found');
    expect(decideVerdict([absent, failed], { passed: true, believableAt: at }).kind).toBe('lookup-error');
    expect(decideVerdict([failed], undefined).kind).toBe('lookup-error');
    expect(() => decideVerdict([], undefined)).toThrow(RangeError);
  });
});

describe('slots', () => {
  it('grants what is free now, and wakes a waiter on release', async () => {
    const slots = createSlots(2);
    const granted = slots.take(5);
    expect(granted).toHaveLength(2);
    expect(slots.take(1)).toHaveLength(0);
    let woke = false;
    const waiting = slots.acquire().then((release) => {
      woke = true;
      return release;
    });
    granted[0]!();
    granted[0]!(); // a second release of one slot is ignored
    (await waiting)();
    expect(woke).toBe(true);
    granted[1]!();
    expect(slots.free).toBe(2);
  });
});
