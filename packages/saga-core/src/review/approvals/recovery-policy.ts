import type { z } from 'zod';
import type { RunPolicy } from '../../db/schema.js';
import { sagaPolicySchema } from '../../sagas/saga-policy.js';
import type { MoneyMove } from '../../tools/define-tool.js';

/**
 * The run policy's rules for recovery (issue 12): which compensations wait for a person, and how long the
 * run's authority lasts. A typed view over `runs.policy`, which the API validates at creation
 * (`sagaPolicySchema`); read here field by field with that schema, so a run created before these fields
 * existed (or with none of them) reads as "no rule": an unbound run recovers exactly as before.
 */
export interface RecoveryPolicy {
  /** By currency (three letters, any case), in minor units: a compensation moving more waits for a person. */
  readonly approveMoneyAbove?: Readonly<Record<string, number>>;
  /** A compensation whose tool `deletes` waits for a person. */
  readonly approveDeletions?: boolean;
  /** How long the run's authority lasts from `runs.authority_at`; recovery after it waits for a renewal. */
  readonly authorityTtlMs?: number;
}

/**
 * The recovery rules of a run's stored policy, each field read with its own schema from `sagaPolicySchema`
 * (one home for what a valid field is): a field that does not parse counts as absent, so a row written
 * before the field existed, or by an older version, reads as "no rule" rather than failing the recovery.
 */
export function recoveryPolicyOf(policy: RunPolicy | null | undefined): RecoveryPolicy {
  const p = (policy ?? {}) as Record<string, unknown>;
  const field = <K extends keyof typeof sagaPolicySchema.shape>(key: K) => {
    const parsed = sagaPolicySchema.shape[key].safeParse(p[key]);
    return parsed.success ? (parsed.data as z.infer<(typeof sagaPolicySchema.shape)[K]>) : undefined;
  };
  const money = field('approveMoneyAbove');
  const limits = money && Object.fromEntries(Object.entries(money).map(([c, a]) => [c.toLowerCase(), a]));
  const ttl = field('authorityTtlMs');
  return {
    ...(limits && Object.keys(limits).length ? { approveMoneyAbove: limits } : {}),
    ...(field('approveDeletions') === true ? { approveDeletions: true } : {}),
    ...(ttl !== undefined ? { authorityTtlMs: ttl } : {}),
  };
}

/** Why a compensation must wait for a person, or null: money above the currency's limit, or a deletion. */
export type ApprovalNeed =
  | { readonly kind: 'money'; readonly move: MoneyMove; readonly limit: number }
  | { readonly kind: 'deletion' };

/**
 * Whether the run policy holds a call for an approval (a forward call, `bindCall`, where only money counts;
 * a compensation, the compensator): its tool moves more than the limit of the
 * currency it moves (strictly more: a limit is the most that goes without a person; a currency without a
 * limit is not held), or its tool deletes under `approveDeletions`. Money is judged first: a tool that both
 * moves and deletes is shown to the person as the money it moves.
 */
export function approvalNeed(
  p: RecoveryPolicy,
  tool: { readonly deletes: boolean },
  move: MoneyMove | null,
): ApprovalNeed | null {
  if (move && p.approveMoneyAbove) {
    const limit = p.approveMoneyAbove[move.currency.toLowerCase()];
    if (limit !== undefined && move.amount > limit) return { kind: 'money', move, limit };
  }
  if (tool.deletes && p.approveDeletions) return { kind: 'deletion' };
  return null;
}

/**
 * Whether the run's authority has lapsed at `now` (the database's clock, read with the row): with
 * `authorityTtlMs`, the authority runs from `authority_at` (the run's creation, then each approval of the run
 * that was approved) for that long. Without a TTL it never lapses.
 */
export function authorityLapsed(p: RecoveryPolicy, authorityAt: Date, now: Date): boolean {
  return p.authorityTtlMs !== undefined && authorityAt.getTime() + p.authorityTtlMs <= now.getTime();
}

/**
 * Why 24 hours: as long as a held forward step waits (the dispatcher's APPROVAL_TTL_MS default); a person
 * has a working day to decide a refund or a renewal before it expires (treated as a rejection).
 */
export const RECOVERY_APPROVAL_TTL_MS = 24 * 3600_000;
