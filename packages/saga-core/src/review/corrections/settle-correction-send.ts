import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { SagaDb } from '../../db/connect.js';
import type { CorrectionRow } from '../../db/schema.js';
import { InvalidCorrectionTransitionError } from '../../errors/errors.js';
import { lockReviewItem } from '../lock-review-item.js';
import { CorrectionStatus } from './correction-status.js';
import { lookupEvidence } from '../../tools/lookup-by-key.js';
import { errorForLog } from '../../privacy/args-for-log.js';
import { settleFromLookup } from '../../tools/settle-from-lookup.js';
import { refusalDetail } from '../../tools/refused-under-key.js';
import type { ToolRegistry } from '../../tools/tool-registry.js';
import { CORRECTION_TOOL } from './correction-send-key.js';
import {
  CLEAR_SEND_LEASE,
  transitionCorrection,
  type CorrectionTransitionInput,
} from './transition-correction.js';

/** What a settle of one correction send came to. */
export type CorrectionSettlement =
  /** The lookup found the email under the key: `sent`, with that evidence. Nothing was sent. */
  | { readonly kind: 'sent'; readonly row: CorrectionRow }
  /** No email under the key past the lookup lag and a re-check: back to `open`, to be sent (same key). */
  | { readonly kind: 'reopened'; readonly row: CorrectionRow }
  /** A sender still holds a live lease: nothing to settle yet. */
  | { readonly kind: 'in-flight' }
  /** Nothing found, but the vendor's search may not show the send yet: look again from `believableAt`. */
  | { readonly kind: 'too-early'; readonly believableAt: Date }
  /** The lookup failed; nothing was learnt. */
  | { readonly kind: 'lookup-error'; readonly error: { readonly name: string; readonly message: string } }
  /** The row is no longer a send to settle (another settler or the sender moved it). */
  | { readonly kind: 'moved' }
  /** The registry has no email tool to look up with: a person must look (logged). */
  | { readonly kind: 'no-tool' };

export interface SettleCorrectionDeps {
  readonly db: SagaDb;
  readonly registry: ToolRegistry;
  /** Pause before a first "not found" is looked up again (LOOKUP_RECHECK_MS). */
  readonly recheckMs: number;
  readonly log: Logger;
}

/**
 * Settles one correction send that is `unknown`, or `sending` with its lease run out (by the database's
 * clock: the sender is gone), from the email tool's lookup by the send's key (the email's `saga_key` tag),
 * before anything is sent again:
 *
 * 1. `sending` past its lease → `unknown` (compare-and-set on the expired lease: a live sender keeps it);
 * 2. the one lookup rule of core, `settleFromLookup` (a "not found" is believed only once the tool's
 *    `lookupLagMs` has passed since `send_started_at` and a re-check agrees);
 * 3. found → `sent` with the evidence; absent → `open` (the same version, hence the same key, may be sent
 *    again); too early or a failed lookup → unchanged, for the next sweep.
 *
 * Writes by compare-and-set on `unknown` and the key, under the run's and the row's locks, so two settlers
 * (two reconcilers, or a reconciler and an operator's send) never both move it. Lookups run outside any
 * transaction. Never throws for the vendor's sake; a database error does throw.
 */
export async function settleCorrectionSend(
  d: SettleCorrectionDeps,
  c: CorrectionRow,
): Promise<CorrectionSettlement> {
  const key = c.idempotency_key;
  const id = String(c.id);
  if (key === null || (c.status !== CorrectionStatus.SENDING && c.status !== CorrectionStatus.UNKNOWN))
    return { kind: 'moved' };
  const log = d.log.child({ correctionId: id, runId: c.run_id, stepIdx: c.step_idx, key });
  const move = (t: Omit<CorrectionTransitionInput, 'id' | 'key'>) =>
    d.db
      .transaction()
      .execute(async (trx) => {
        await lockReviewItem(trx, 'corrections', id, c.tenant_id);
        return transitionCorrection(trx, { ...t, id, key });
      })
      .catch((err: unknown) => {
        if (err instanceof InvalidCorrectionTransitionError) return null;
        throw err;
      });

  if (c.status === CorrectionStatus.SENDING) {
    const expired = await move({
      to: CorrectionStatus.UNKNOWN,
      onlyFrom: [CorrectionStatus.SENDING],
      leaseExpired: true,
      cause: 'correction send: the lease ran out with the sender gone; settled by the lookup by key',
      detail: { key, leaseOwner: c.lease_owner, leaseUntil: c.lease_until?.toISOString() ?? null },
      patch: CLEAR_SEND_LEASE,
    });
    if (!expired) {
      const now = await d.db
        .selectFrom('corrections')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirst();
      return now?.status === CorrectionStatus.SENDING ? { kind: 'in-flight' } : { kind: 'moved' };
    }
  }

  const tool = d.registry.get(CORRECTION_TOOL);
  if (!tool) {
    log.error({ tool: CORRECTION_TOOL }, 'correction send left unknown: no email tool to look it up with');
    return { kind: 'no-tool' };
  }
  const settled = await settleFromLookup({
    db: d.db,
    tool,
    target: {
      idempotency_key: key,
      run_id: c.run_id,
      step_idx: c.step_idx,
      tenant_id: c.tenant_id,
      args: c.command,
      // No send of the correction is older than its row.
      created_at: c.created_at,
    },
    // Written by the database when the send started; a row from before 0006 has none: its creation time is
    // never later than any send of it.
    lastAttemptAt: c.send_started_at ?? c.created_at,
    recheckMs: d.recheckMs,
    log,
  });
  const v = settled.verdict;
  const lookups = settled.observations.map(lookupEvidence);
  switch (v.kind) {
    case 'found': {
      const row = await move({
        to: CorrectionStatus.SENT,
        onlyFrom: [CorrectionStatus.UNKNOWN],
        cause: 'lookup: the email under the key exists; nothing sent again',
        detail: { key, externalRef: v.effect.externalRef, duplicates: v.duplicates, lookups },
        patch: { external_ref: v.effect.externalRef },
      });
      return row ? { kind: 'sent', row } : { kind: 'moved' };
    }
    case 'absent': {
      const row = await move({
        to: CorrectionStatus.OPEN,
        onlyFrom: [CorrectionStatus.UNKNOWN],
        cause: 'lookup: no email under the key past the lookup lag and a re-check; open to send again',
        detail: { key, believableAt: settled.lag.believableAt.toISOString(), lookups },
        patch: { decided_by: null, decided_by_token: null, decided_at: null },
      });
      return row ? { kind: 'reopened', row } : { kind: 'moved' };
    }
    case 'refused': {
      // The vendor holds the send and refused it: nothing reached the customer; a person sees why.
      const row = await move({
        to: CorrectionStatus.OPEN,
        onlyFrom: [CorrectionStatus.UNKNOWN],
        cause: 'lookup: the vendor refused the email under the key; open to send again',
        detail: { key, refused: refusalDetail(v.error), lookups },
        patch: { decided_by: null, decided_by_token: null, decided_at: null },
      });
      return row ? { kind: 'reopened', row } : { kind: 'moved' };
    }
    case 'too-early':
    case 'resendable': // nothing proved: a person sends again only once absence is proved
      return { kind: 'too-early', believableAt: v.believableAt };
    case 'lookup-error':
      log.warn(
        { error: errorForLog(v.error, tool, c.command) },
        'correction send lookup failed; the next sweep looks again',
      );
      return { kind: 'lookup-error', error: v.error };
    default: {
      const never: never = v;
      throw new Error(`unhandled verdict ${JSON.stringify(never)}`);
    }
  }
}

/**
 * Why 20: a sweep settles at most this many sends at once (each costs up to two email lookups and a
 * re-check pause); unsettled correction sends are rare (a timeout or a crash mid-send), so one sweep
 * normally takes them all, and the next sweep takes the rest.
 */
const SWEEP_LIMIT = 20;

/**
 * Who settles a send whose sender died: this sweep, run by the reconciler on its periodic sweep (every
 * RECONCILER_SWEEP_MS, next to `expireDueApprovals`), and also an operator's next send of that correction
 * (the API settles it inline first). It takes the oldest sends that are `unknown` or `sending` past their
 * lease (by the database's clock; `corrections_sends_unsettled` serves the read) and settles each with
 * {@link settleCorrectionSend}. A failure of one is logged and left to the next sweep. A row still too
 * early is looked up again on every sweep until its lag has passed (a found email is believed at once).
 */
export async function settleStaleCorrectionSends(
  db: SagaDb,
  registry: ToolRegistry,
  opts: { readonly recheckMs: number; readonly log: Logger; readonly limit?: number },
): Promise<readonly { readonly id: string; readonly kind: CorrectionSettlement['kind'] | 'failed' }[]> {
  const rows = await db
    .selectFrom('corrections')
    .selectAll()
    .where((w) =>
      w.or([
        w('status', '=', CorrectionStatus.UNKNOWN),
        w.and([w('status', '=', CorrectionStatus.SENDING), w('lease_until', '<', sql<Date>`now()`)]),
      ]),
    )
    .orderBy('send_started_at')
    .limit(opts.limit ?? SWEEP_LIMIT)
    .execute();
  const deps = { db, registry, recheckMs: opts.recheckMs, log: opts.log };
  return Promise.all(
    rows.map(async (c) => {
      const id = String(c.id);
      try {
        return { id, kind: (await settleCorrectionSend(deps, c)).kind };
      } catch (err) {
        opts.log.error(
          { err, correctionId: id },
          'settling a correction send failed; the next sweep retries',
        );
        return { id, kind: 'failed' as const };
      }
    }),
  );
}
