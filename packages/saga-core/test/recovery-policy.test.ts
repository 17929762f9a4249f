/**
 * The recovery rules read from a stored run policy: valid fields as the API's schema accepts them, and
 * anything else (an older row, a field of the wrong type) as "no rule", never as a failed recovery.
 */
import { describe, expect, it } from 'vitest';
import { approvalNeed, authorityLapsed, recoveryPolicyOf } from '../src/index.js';

describe('recoveryPolicyOf', () => {
  it('reads the fields the policy schema accepts, currencies lower-cased', () => {
    expect(
      recoveryPolicyOf({ approveMoneyAbove: { EUR: 5000 }, approveDeletions: true, authorityTtlMs: 60_000 }),
    ).toEqual({ approveMoneyAbove: { eur: 5000 }, approveDeletions: true, authorityTtlMs: 60_000 });
  });

  it('reads a field that does not parse as absent, keeping the others', () => {
    const policy = recoveryPolicyOf({
      approveMoneyAbove: { euro: 5000 },
      approveDeletions: 'yes',
      authorityTtlMs: -1,
      requirePivot: true,
    } as never);
    expect(policy).toEqual({});
    expect(recoveryPolicyOf({ approveMoneyAbove: { usd: 1.5 }, approveDeletions: true })).toEqual({
      approveDeletions: true,
    });
    expect(recoveryPolicyOf(null)).toEqual({});
  });

  it('holds money strictly above the limit of its currency, and deletions only when asked', () => {
    const p = recoveryPolicyOf({ approveMoneyAbove: { EUR: 5000 } });
    expect(approvalNeed(p, { deletes: false }, { currency: 'eur', amount: 5000 })).toBeNull();
    expect(approvalNeed(p, { deletes: false }, { currency: 'EUR', amount: 5001 })).toEqual({
      kind: 'money',
      move: { currency: 'EUR', amount: 5001 },
      limit: 5000,
    });
    expect(approvalNeed(p, { deletes: false }, { currency: 'usd', amount: 9_999_999 })).toBeNull();
    expect(approvalNeed(p, { deletes: true }, null)).toBeNull();
    expect(approvalNeed(recoveryPolicyOf({ approveDeletions: true }), { deletes: true }, null)).toEqual({
      kind: 'deletion',
    });
  });

  it('lapses the authority only with a TTL, at its end', () => {
    const at = new Date('2026-12-01T10:00:00Z');
    const p = recoveryPolicyOf({ authorityTtlMs: 60_000 });
    expect(authorityLapsed(p, at, new Date('2026-12-01T10:00:59.999Z'))).toBe(false);
    expect(authorityLapsed(p, at, new Date('2026-12-01T10:01:00Z'))).toBe(true);
    expect(authorityLapsed(recoveryPolicyOf({}), at, new Date('2030-01-01T00:00:00Z'))).toBe(false);
  });
});
