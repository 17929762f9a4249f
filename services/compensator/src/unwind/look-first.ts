import {
  nextLookupAt,
  CompensationStatus,
  lookupByKey,
  lookupEvidence,
  settleFromLookup,
  StepEventKind,
  type LookupObservation,
  type LookupSettlement,
} from '@agent-saga/core';
import { CompensationOutcome } from '../metrics/compensator-metrics.js';
import { argsForLookup } from './resolve-command-refs.js';
import {
  ended,
  recheckLater,
  unhandled,
  type CompensationPass,
  type Ended,
  type GoingOn,
} from './compensation-pass.js';
import type { ToolFound } from './find-tool.js';
import { giveUpOrRecheck } from './give-up-or-recheck.js';
import type { UnwindDeps } from './unwind-deps.js';
import { forwardTrace } from './forward-trace.js';

/**
 * The lookup found nothing that settles the compensation: absent, or (before any attempt that may have
 * reached the system) unreadable, where the compensation key keeps a send safe.
 */
export type LookedFirst = ({ readonly kind: 'not-found' } & GoingOn) | Ended;

type Looked = Pick<LookupSettlement, 'verdict' | 'observations'>;

/** The cause of each lookup event. */
const LOOKUP_CAUSE = 'compensator: lookup by the compensation key';

/**
 * Stage 1 of `runCompensation`, evidence first: the compensation tool's lookup by the compensation key.
 *
 * - Found → done already, with that evidence; nothing is sent (a refund already made, a ticket a person
 *   already closed under our key).
 * - After an unknown attempt, core's one lookup rule decides (`settleFromLookup`): a "not found" is
 *   believed only past the tool's lookupLagMs since that attempt, by the database's clock, and a re-check;
 *   before that the compensation waits (never a second refund). A lookup that fails waits too, until the
 *   unknown wait has passed: then a person must look.
 * - Before any attempt that may have reached the system (pending, or every attempt refused), one "not
 *   found" is enough: there is nothing for the vendor's search to lag behind; a failed lookup learns
 *   nothing, and the pass goes on.
 *
 * The lookup sees the command as it would be sent; a ref that cannot be resolved yet stays a placeholder.
 * Each lookup becomes an event (`lookups`), written before the pass's first write.
 */
export async function lookFirst(
  d: UnwindDeps,
  pass: CompensationPass,
  prev: ToolFound,
): Promise<LookedFirst> {
  switch (prev.kind) {
    case 'ended':
      return prev;
    case 'tool-found':
      return lookUp(d, pass, prev);
    default:
      return unhandled(prev, 'stage result');
  }
}

async function lookUp(d: UnwindDeps, pass: CompensationPass, go: GoingOn): Promise<LookedFirst> {
  const { comp, log } = pass;
  const target = {
    ...comp,
    ...forwardTrace(pass),
    idempotency_key: go.key,
    args: argsForLookup(comp.args, pass.steps),
  };
  const sentAt = comp.last_attempt_at ?? comp.updated_at;
  const looked: Looked =
    comp.status === CompensationStatus.UNKNOWN
      ? await settleFromLookup({
          db: d.db,
          tool: go.tool,
          target,
          lastAttemptAt: sentAt,
          recheckMs: d.config.LOOKUP_RECHECK_MS,
          log,
        })
      : lookedOnce(await lookupByKey(go.tool, target, log));
  const lookups = looked.observations.map((o) => ({
    runId: comp.run_id,
    stepIdx: comp.step_idx,
    kind: StepEventKind.COMPENSATION,
    cause: LOOKUP_CAUSE,
    detail: lookupEvidence(o),
  }));
  const evidence = lookupEvidence(looked.observations.at(-1)!);
  const v = looked.verdict;
  switch (v.kind) {
    case 'found':
      return ended(
        {
          kind: 'done-already',
          cause:
            comp.status === CompensationStatus.PENDING
              ? 'precondition: already compensated (found by the compensation key); nothing sent'
              : 'lookup: found by the compensation key',
          detail: evidence,
          patch: {
            external_ref: v.effect.externalRef,
            result: JSON.stringify(v.effect.result ?? null),
            next_attempt_at: null,
          },
          outcome: CompensationOutcome.FOUND_BY_KEY,
          duplicates: v.duplicates.length > 0,
        },
        lookups,
      );
    case 'too-early':
    case 'resendable': // a compensation is sent again only once absence is proved, as before
      return ended(
        recheckLater(
          nextLookupAt({
            lastAttemptAt: sentAt,
            believableAt: v.believableAt,
            lookupLagMs: go.tool.lookupLagMs,
            floorMs: d.config.LOOKUP_RECHECK_MS,
          }),
          'not found within the tool lookup lag',
        ),
        lookups,
      );
    case 'lookup-error': {
      // Nothing sent yet that could have taken effect: the key keeps the send safe.
      if (comp.status !== CompensationStatus.UNKNOWN) return { ...go, kind: 'not-found', lookups };
      return giveUpOrRecheck(d, {
        since: sentAt,
        tool: go.tool,
        attemptNo: comp.attempts,
        giveUpReason: `outcome unknown and lookups fail: ${v.error.message}`,
        evidence,
        recheckWhy: 'lookup failed',
        lookups,
      });
    }
    case 'absent':
      return { ...go, kind: 'not-found', lookups };
    case 'refused':
      // The vendor holds this compensation refused under its key: sending it again is told the same
      // refusal, which the attempt's outcome records as any refusal (retried after a backoff, then the
      // attempt budget), so the pass goes on exactly as for a refusal it saw itself.
      return { ...go, kind: 'not-found', lookups };
    default:
      return unhandled(v, 'verdict');
  }
}

/**
 * The verdict of one lookup made before any attempt that may have reached the system: a "not found" is
 * absence at once (no lag rule applies), a failure learns nothing.
 */
function lookedOnce(o: LookupObservation): Looked {
  switch (o.kind) {
    case 'found':
      return {
        verdict: { kind: 'found', effect: o.effect, duplicates: o.effect.duplicates ?? [] },
        observations: [o],
      };
    case 'absent':
      return { verdict: { kind: 'absent' }, observations: [o] };
    case 'refused':
      return { verdict: { kind: 'refused', error: o.error }, observations: [o] };
    case 'error':
      return { verdict: { kind: 'lookup-error', error: o.error }, observations: [o] };
    default:
      return unhandled(o, 'observation');
  }
}
