import type { RawBuilder } from 'kysely';
import {
  callTool,
  checkPrecondition,
  classifyToolError,
  CompensationStatus,
  CrashPoint,
  dbNowPlus,
  InvalidArgsError,
  InvalidTransitionError,
  lookupByKey,
  lookupEvidence,
  parseArgs,
  preconditionEvidence,
  readDeadline,
  resolveRefs,
  settleFromLookup,
  StepEventKind,
  StepStatus,
  type AnyTool,
  type CompensationRow,
  type Logger,
  type LookupObservation,
  type LookupSettlement,
  type StepEventInput,
  type StepRow,
  type ToolCallResult,
} from '@agent-saga/core';
import { CompensationOutcome, ManualInterventionKind } from '../metrics/compensator-metrics.js';
import { transitionCompensation, type CompensationTransition } from '../sql/transition-compensation.js';
import { backoffMs } from './backoff.js';
import { unknownWaitMs, type UnwindDeps } from './unwind-deps.js';

/**
 * Advances one due compensation by one attempt, through the same intent-log discipline as a forward call:
 *
 * 1. Evidence first: the compensation tool's lookup by the compensation key. Found → compensated with that
 *    evidence; nothing is sent (a refund already made, a ticket a person already closed under our key).
 *    After an unknown attempt core's one lookup rule decides (`settleFromLookup`): a "not found" is
 *    believed only past the tool's lookupLagMs since that attempt, by the database's clock, and a re-check;
 *    before that the compensation waits (never a second refund).
 * 2. The precondition, when the forward tool declares one (`checkPrecondition`): the target as the forward
 *    step left it → go on; already in the compensated state → compensated with that evidence, nothing
 *    sent; changed in another way → nothing sent, the compensation fails for good (a case: the run ends
 *    MANUAL_INTERVENTION). A check that cannot read the target waits, like an unknown outcome.
 * 3. The stored command, its `ref(key)` placeholders resolved to the external refs of the run's CONFIRMED
 *    steps, parsed by the compensation tool's schema. A command that cannot be made fails for good.
 * 4. The intent: → running with a lease and the attempt counted, committed BEFORE the call, with the
 *    lookup events of step 1 (which, on the other paths, are committed before their move).
 * 5. The call, with the compensation key and the tool's timeout.
 * 6. The outcome, under this attempt's lease: compensated; failed (refused: retried with the same key
 *    after a backoff with jitter, within COMPENSATION_MAX_ATTEMPTS); unknown (anything else: looked up
 *    by key next time).
 *
 * The lookup events, the intent and the outcome go through this process's statement groups
 * (`unwind-groups.ts`), each one statement for the compensations of every run at the same point; the
 * rarer moves are one transaction each (`transitionCompensation`).
 *
 * Every lease, due time and give-up deadline is written and read on the database's clock (`dbNowPlus`,
 * `readDeadline`), never this process's: the reconciler and the executors judge the same rows by it.
 *
 * The run's unwind reason (`unwindReason`, from the run row) reaches the tool as `ctx.unwindReason`, so a
 * compensation that leaves a note on its target (a ticket's closing comment) can say why; the stored
 * command itself, written before the forward call, cannot know it.
 *
 * Two compensators may pass over one compensation at once (a stalled job handed on, a NOTIFY and a sweep):
 * every move from what this pass read is a compare-and-set on the status AND the attempt count it read,
 * so a pass that read a row before another attempt came and went (failed → running → failed) writes
 * nothing and sends nothing; moves after the call are guarded by this attempt's lease.
 */
export async function runCompensation(
  d: UnwindDeps,
  comp: CompensationRow,
  steps: readonly StepRow[],
  unwindReason: string | null,
): Promise<void> {
  const log = d.logger.child({ runId: comp.run_id, stepIdx: comp.step_idx, key: comp.idempotency_key });
  const at = { runId: comp.run_id, stepIdx: comp.step_idx } as const;
  const lookups = pendingEvents(d);
  const move = async (
    t: Omit<CompensationTransition, 'runId' | 'stepIdx'>,
  ): Promise<CompensationRow | null> => {
    await lookups.flush();
    try {
      return await d.db.transaction().execute((trx) => transitionCompensation(trx, { ...at, ...t }));
    } catch (err) {
      if (err instanceof InvalidTransitionError) {
        log.info({ to: t.to, from: err.from }, MOVED_MEANWHILE);
        return null;
      }
      throw err;
    }
  };
  /** The guard of every move made from what this pass read (see above). */
  const seenRow = { onlyFrom: [comp.status], atAttempts: comp.attempts } as const;
  const counted = (outcome: CompensationOutcome) =>
    d.metrics?.compensations.inc({ tool: comp.tool ?? '(none)', outcome });
  const confirmed = (row: CompensationRow) => observeConfirmed(d, comp.tool ?? '(none)', row);
  const giveUp = async (
    reason: string,
    detail: Record<string, unknown> = {},
    outcome: CompensationOutcome = CompensationOutcome.GAVE_UP,
    error: Record<string, unknown> | null = null,
  ) => {
    const moved = await move({
      ...seenRow,
      to: CompensationStatus.FAILED,
      cause: `compensator: needs a person: ${reason}`,
      detail,
      patch: {
        next_attempt_at: null,
        reason,
        lease_until: null,
        lease_owner: null,
        ...(error ? { error: JSON.stringify(error) } : {}),
      },
    });
    if (moved) {
      counted(outcome);
      d.metrics?.manualInterventions.inc({ kind: ManualInterventionKind.COMPENSATION });
    }
    return moved;
  };

  const tool = comp.tool ? d.registry.get(comp.tool) : undefined;
  if (!tool || !comp.idempotency_key)
    return void (await giveUp(`compensation tool ${comp.tool ?? '(none)'} is not registered`));
  // A lookup sees the command as it would be sent; a ref that cannot be resolved yet stays a placeholder.
  const target = { ...comp, idempotency_key: comp.idempotency_key, args: argsForLookup(comp.args, steps) };

  // 1. Evidence first. After an unknown attempt, the one lookup rule (lag on the database's clock, then a
  //    re-check); before any attempt that may have reached the system (pending, or every attempt refused),
  //    one "not found" is enough: there is nothing for the vendor's search to lag behind.
  const sentAt = comp.last_attempt_at ?? comp.updated_at;
  const looked: Pick<LookupSettlement, 'verdict' | 'observations'> =
    comp.status === CompensationStatus.UNKNOWN
      ? await settleFromLookup({
          db: d.db,
          tool,
          target,
          lastAttemptAt: sentAt,
          recheckMs: d.config.LOOKUP_RECHECK_MS,
          log,
        })
      : lookedOnce(await lookupByKey(tool, target, log));
  lookups.add(
    looked.observations.map((o) => ({
      ...at,
      kind: StepEventKind.COMPENSATION,
      cause: 'compensator: lookup by the compensation key',
      detail: lookupEvidence(o),
    })),
  );
  const evidence = lookupEvidence(looked.observations.at(-1)!);
  const v = looked.verdict;
  switch (v.kind) {
    case 'found': {
      const moved = await move({
        ...seenRow,
        to: CompensationStatus.COMPENSATED,
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
      });
      if (v.duplicates.length) d.metrics?.duplicateEffects.inc({ tool: tool.name });
      if (moved) {
        counted(CompensationOutcome.FOUND_BY_KEY);
        confirmed(moved);
      }
      return;
    }
    case 'too-early':
      return recheckLater(d, lookups, comp, v.believableAt, 'not found within the tool lookup lag');
    case 'lookup-error':
      if (comp.status === CompensationStatus.UNKNOWN) {
        if ((await readDeadline(d.db, sentAt, unknownWaitMs(d.config, tool.lookupLagMs))).passed)
          return void (await giveUp(`outcome unknown and lookups fail: ${v.error.message}`, evidence));
        return recheckLater(d, lookups, comp, dbNowPlus(backoffMs(d.config, comp.attempts)), 'lookup failed');
      }
      break; // nothing sent yet that could have taken effect: the key keeps the send safe
    case 'absent':
      break;
    default: {
      const never: never = v;
      throw new Error(`unhandled verdict ${JSON.stringify(never)}`);
    }
  }
  if (comp.attempts >= d.config.COMPENSATION_MAX_ATTEMPTS)
    return void (await giveUp(
      `${comp.attempts} attempts, none confirmed (budget ${d.config.COMPENSATION_MAX_ATTEMPTS})`,
    ));

  // 2. The precondition on the target, as the forward step left it.
  const forward = steps.find((s) => s.step_idx === comp.step_idx);
  const forwardTool = forward ? d.registry.get(forward.tool) : undefined;
  if (forward && forwardTool) {
    const pre = await checkPrecondition(forwardTool, forward, log);
    const evidence = {
      ...preconditionEvidence(pre),
      forwardTool: forward.tool,
      target: forward.external_ref,
    };
    if (pre.kind === 'already_compensated') {
      const moved = await move({
        ...seenRow,
        to: CompensationStatus.COMPENSATED,
        cause: 'precondition: the target is already in the compensated state; nothing sent',
        detail: evidence,
        patch: { next_attempt_at: null, result: JSON.stringify(evidence) },
      });
      if (moved) {
        counted(CompensationOutcome.ALREADY_COMPENSATED);
        confirmed(moved);
      }
      return;
    }
    if (pre.kind === 'changed')
      return void (await giveUp(
        `the target changed since the forward step (${pre.changed}); not overwritten`,
        evidence,
        CompensationOutcome.TARGET_CHANGED,
        { name: 'PreconditionChanged', message: pre.changed, ...evidence },
      ));
    if (pre.kind === 'error') {
      const since = comp.last_attempt_at ?? comp.created_at;
      const wait = unknownWaitMs(d.config, forwardTool.lookupLagMs);
      if ((await readDeadline(d.db, since, wait)).passed)
        return void (await giveUp(`the precondition cannot be read: ${pre.error.message}`, evidence));
      return recheckLater(
        d,
        lookups,
        comp,
        dbNowPlus(backoffMs(d.config, comp.attempts + 1)),
        'precondition failed',
      );
    }
  }

  // 3. The stored command, made concrete.
  let args: Record<string, unknown>;
  try {
    args = parseArgs(
      tool,
      resolveRefs(comp.args ?? {}, (key) => externalRefOf(steps, key)),
    );
  } catch (err) {
    if (err instanceof InvalidArgsError || err instanceof UnresolvedRefError)
      return void (await giveUp(`the stored compensation cannot be made: ${err.message}`));
    throw err;
  }

  // 4. The intent, before the call: by compare-and-set on the status and count this pass read, with a
  //    lease on the database's clock (judged by `now()` in drive-run), grouped with other runs' claims.
  const claimed = await d.groups.claim.submit({
    ...at,
    seenStatus: comp.status,
    seenAttempts: comp.attempts,
    leaseMs: tool.timeoutMs + d.config.COMPENSATOR_LEASE_MARGIN_MS,
    detail: { attempt: comp.attempts + 1, worker: d.workerId, args, unwindReason },
    evidence: lookups.take(),
  });
  if (!claimed) return void log.info({ to: CompensationStatus.RUNNING }, MOVED_MEANWHILE);

  // 5. The call, with the compensation's own key.
  const call = await callTool(
    tool,
    args,
    {
      idempotencyKey: target.idempotency_key,
      runId: comp.run_id,
      stepIdx: comp.step_idx,
      tenantId: comp.tenant_id,
      attempt: claimed.attempts,
      logger: log,
      ...(unwindReason !== null ? { unwindReason } : {}),
    },
    d.shutdownSignal,
  );
  d.crash(CrashPoint.COMPENSATION_AFTER_TOOL_BEFORE_RECORD);
  d.metrics?.latency.observe({ tool: tool.name, ok: String(call.ok) }, call.durationMs / 1000);

  // 6. The outcome, under this attempt's lease.
  await recordOutcome(d, claimed, tool, call, log);
}

/**
 * Step 6 of {@link runCompensation}: records what the attempt `claimed` came to, under its lease (grouped
 * with other runs' outcomes): compensated; failed (refused: retried with the same key after a backoff with
 * jitter, within COMPENSATION_MAX_ATTEMPTS); unknown (anything else: looked up by key next time).
 */
async function recordOutcome(
  d: UnwindDeps,
  claimed: CompensationRow,
  tool: AnyTool,
  call: ToolCallResult,
  log: Logger,
): Promise<void> {
  const at = { runId: claimed.run_id, stepIdx: claimed.step_idx } as const;
  const counted = (outcome: CompensationOutcome) =>
    d.metrics?.compensations.inc({ tool: tool.name, outcome });
  if (call.ok) {
    const moved = await d.groups.outcome.submit({
      ...at,
      outcome: {
        to: CompensationStatus.COMPENSATED,
        externalRef: call.effect.externalRef,
        result: call.effect.result ?? null,
      },
      cause: 'compensator: tool returned',
      detail: { durationMs: Math.round(call.durationMs), externalRef: call.effect.externalRef },
    });
    if (call.effect.duplicates?.length) d.metrics?.duplicateEffects.inc({ tool: tool.name });
    if (moved) {
      counted(CompensationOutcome.COMPENSATED);
      observeConfirmed(d, tool.name, moved);
    } else log.info({ to: CompensationStatus.COMPENSATED }, MOVED_MEANWHILE);
    log.info({ tool: tool.name, attempt: claimed.attempts }, 'compensated');
    return;
  }
  const outcome = classifyToolError(call.error, call.reason);
  log.warn(
    { err: call.error, outcome: outcome.status, attempt: claimed.attempts },
    'compensation attempt did not confirm',
  );
  const detail = { ...outcome.error, durationMs: Math.round(call.durationMs) };
  if (outcome.status === StepStatus.FAILED) {
    const exhausted = claimed.attempts >= d.config.COMPENSATION_MAX_ATTEMPTS;
    const moved = await d.groups.outcome.submit({
      ...at,
      outcome: {
        to: CompensationStatus.FAILED,
        error: outcome.error,
        retryInMs: exhausted ? null : backoffMs(d.config, claimed.attempts),
        reason: exhausted ? `refused ${claimed.attempts} times: ${outcome.error.message}` : null,
      },
      cause: exhausted
        ? 'compensator: refused; attempt budget exhausted'
        : 'compensator: refused; will retry',
      detail,
    });
    if (!moved) return void log.info({ to: CompensationStatus.FAILED }, MOVED_MEANWHILE);
    counted(exhausted ? CompensationOutcome.GAVE_UP : CompensationOutcome.REFUSED);
    if (exhausted) d.metrics?.manualInterventions.inc({ kind: ManualInterventionKind.COMPENSATION });
    return;
  }
  const unknown = await d.groups.outcome.submit({
    ...at,
    outcome: {
      to: CompensationStatus.UNKNOWN,
      error: outcome.error,
      retryInMs: Math.max(tool.lookupLagMs, backoffMs(d.config, claimed.attempts)),
    },
    cause: 'compensator: outcome unknown; will look it up by key',
    detail,
  });
  if (unknown) counted(CompensationOutcome.UNKNOWN);
  else log.info({ to: CompensationStatus.UNKNOWN }, MOVED_MEANWHILE);
}

/**
 * The evidence a pass gathers before it decides (its lookups by the compensation key), written before
 * the pass's first write: alone (`flush`, the events group) before a single-row move or a re-check, or
 * taken into the attempt's intent (`take`), so that the lookup that allowed a send commits with it.
 */
interface PendingEvents {
  add(events: readonly StepEventInput[]): void;
  /** Writes what was added and not yet written or taken. */
  flush(): Promise<void>;
  /** Hands over what was added and not yet written; the caller writes it. */
  take(): readonly StepEventInput[];
}

function pendingEvents(d: UnwindDeps): PendingEvents {
  let pending: StepEventInput[] = [];
  const take = () => {
    const events = pending;
    pending = [];
    return events;
  };
  return {
    add: (events) => void pending.push(...events),
    take,
    async flush() {
      const events = take();
      if (events.length) await d.groups.events.submit(events);
    },
  };
}

/** What a pass logs when its compare-and-set found the compensation moved by someone else. */
const MOVED_MEANWHILE = 'compensation moved meanwhile; nothing written';

/** Latency from planning to confirmation, and the attempts it took (none: found done, nothing sent). */
function observeConfirmed(d: UnwindDeps, tool: string, row: CompensationRow): void {
  // A metric only (decides nothing): the process clock against the row's creation is close enough.
  d.metrics?.settleLatency.observe({ tool }, (Date.now() - row.created_at.getTime()) / 1000);
  if (row.attempts > 0) d.metrics?.attemptsPerEffect.observe({ tool }, row.attempts);
}

/**
 * Leaves a compensation where it is, to be looked at again at `at` (no status change, so no event): a
 * database timestamp, or `dbNowPlus(ms)`. Guarded by the status and attempt count this pass read: it never
 * postpones an attempt made meanwhile.
 */
async function recheckLater(
  d: UnwindDeps,
  lookups: PendingEvents,
  comp: CompensationRow,
  at: Date | RawBuilder<Date>,
  why: string,
): Promise<void> {
  await lookups.flush();
  await d.db
    .updateTable('compensations')
    .set({ next_attempt_at: at })
    .where('run_id', '=', comp.run_id)
    .where('step_idx', '=', comp.step_idx)
    .where('status', '=', comp.status)
    .where('attempts', '=', comp.attempts)
    .execute();
  const when = at instanceof Date ? { at } : {};
  d.logger.debug(
    { runId: comp.run_id, stepIdx: comp.step_idx, ...when, why },
    'compensation re-check scheduled',
  );
}

/**
 * The verdict of one lookup made before any attempt that may have reached the system: a "not found" is
 * absence at once (no lag rule applies), a failure learns nothing.
 */
function lookedOnce(o: LookupObservation): Pick<LookupSettlement, 'verdict' | 'observations'> {
  switch (o.kind) {
    case 'found':
      return {
        verdict: { kind: 'found', effect: o.effect, duplicates: o.effect.duplicates ?? [] },
        observations: [o],
      };
    case 'absent':
      return { verdict: { kind: 'absent' }, observations: [o] };
    case 'error':
      return { verdict: { kind: 'lookup-error', error: o.error }, observations: [o] };
    default: {
      const never: never = o;
      throw new Error(`unhandled observation ${JSON.stringify(never)}`);
    }
  }
}

/** A `ref(key)` that names no CONFIRMED step with an external ref: guessing would undo the wrong thing. */
class UnresolvedRefError extends Error {}

function argsForLookup(
  stored: Record<string, unknown> | null,
  steps: Parameters<typeof externalRefOf>[0],
): Record<string, unknown> {
  try {
    return resolveRefs(stored ?? {}, (key) => externalRefOf(steps, key)) as Record<string, unknown>;
  } catch {
    return stored ?? {};
  }
}

function externalRefOf(steps: readonly StepRow[], key: string): string {
  const s = steps.find((x) => x.idempotency_key === key);
  if (!s || s.status !== StepStatus.CONFIRMED || s.external_ref === null)
    throw new UnresolvedRefError(`ref ${key} names no confirmed step with an external ref`);
  return s.external_ref;
}
