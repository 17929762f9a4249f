import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  compensationKey,
  isLegalTransition,
  payloadHash,
  resolveRefs,
  ref,
  STEP_TRANSITIONS,
  StepStatus,
  stepKey,
  valuesOf,
} from '@agent-saga/core';

describe('idempotency keys', () => {
  it('are sha256("<run>:<step>:<tool>") hex, first 32 characters', () => {
    const expected = createHash('sha256').update('run-1182:3:charge_card').digest('hex').slice(0, 32);
    expect(stepKey('run-1182', 3, 'charge_card')).toBe(expected);
    expect(stepKey('run-1182', 3, 'charge_card')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('differ by run, step and tool, and never depend on arguments', () => {
    const keys = new Set([
      stepKey('a', 0, 't'),
      stepKey('b', 0, 't'),
      stepKey('a', 1, 't'),
      stepKey('a', 0, 'u'),
    ]);
    expect(keys.size).toBe(4);
  });

  it('give a compensation its own key, derived from the forward tool', () => {
    expect(compensationKey('r', 2, 'charge_card')).toBe(stepKey('r', 2, 'compensate:charge_card'));
    expect(compensationKey('r', 2, 'charge_card')).not.toBe(stepKey('r', 2, 'charge_card'));
  });
});

describe('canonical payload hash', () => {
  it('ignores key order and undefined fields, at any depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    expect(payloadHash('t', { a: 1, b: 2 })).toBe(payloadHash('t', { b: 2, a: 1 }));
    expect(payloadHash('t', { a: 1 })).not.toBe(payloadHash('u', { a: 1 }));
  });
});

describe('refs', () => {
  it('are resolved from keys to external refs, anywhere in the arguments', () => {
    const args = { ticket: ref('k1'), items: [ref('k2'), 'x'], note: 'n' };
    const map: Record<string, string> = { k1: 'SUP-1', k2: 'pi_2' };
    expect(resolveRefs(args, (k) => map[k]!)).toEqual({ ticket: 'SUP-1', items: ['pi_2', 'x'], note: 'n' });
  });
});

describe('step transitions', () => {
  const all = valuesOf(StepStatus);
  const legal: [string, string][] = [
    ['INTENDED', 'CONFIRMED'],
    ['INTENDED', 'FAILED'],
    ['INTENDED', 'UNKNOWN'],
    ['INTENDED', 'NOT_EXECUTED'],
    ['UNKNOWN', 'NOT_EXECUTED'],
    ['UNKNOWN', 'CONFIRMED'],
    // Only by evidence: the lookup found the call refused under its key (`RefusedUnderKey`).
    ['UNKNOWN', 'FAILED'],
    ['AWAITING_APPROVAL', 'INTENDED'],
    ['AWAITING_APPROVAL', 'REJECTED'],
    ['NOT_EXECUTED', 'INTENDED'],
  ];
  it('allow what the issue names', () => {
    for (const [from, to] of legal)
      expect(isLegalTransition(from as StepStatus, to as StepStatus)).toBe(true);
  });
  it('refuse every move out of CONFIRMED, FAILED and REJECTED, and UNKNOWN → INTENDED', () => {
    for (const from of [StepStatus.CONFIRMED, StepStatus.FAILED, StepStatus.REJECTED])
      for (const to of all) expect(isLegalTransition(from, to)).toBe(false);
    // An unknown step is sent again only once a lookup proved it NOT_EXECUTED (or may send it again).
    expect(isLegalTransition(StepStatus.UNKNOWN, StepStatus.INTENDED)).toBe(false);
  });
  it('cover every status', () => {
    expect(Object.keys(STEP_TRANSITIONS).sort()).toEqual([...all].sort());
  });
});
