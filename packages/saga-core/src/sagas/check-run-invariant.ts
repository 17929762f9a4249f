import { sql } from 'kysely';
import type { SagaDb, SagaTrx } from '../db/connect.js';
import type { Logger } from '../process/logger.js';
import type { InvariantEnding, InvariantLookups, InvariantRun, ToolModuleLookups } from './saga-invariant.js';
import type { SagaRegistry } from './saga-registry.js';

/**
 * What a role that ends runs holds to check their invariants: its definitions and the tool module's
 * lookups (`loadToolModule`), a logger, and how long one check may take.
 */
export interface InvariantChecker {
  readonly definitions: SagaRegistry;
  readonly lookups: ToolModuleLookups;
  readonly logger: Logger;
  /** Bound of one check, every lookup included (default {@link DEFAULT_INVARIANT_TIMEOUT_MS}). */
  readonly timeoutMs?: number;
}

/**
 * Why 10 s: an invariant makes a handful of vendor reads, each answering in well under a second when the
 * vendor is up; a vendor that has not answered in 10 s is down for this check, which is then made again.
 */
export const DEFAULT_INVARIANT_TIMEOUT_MS = 10_000;

/** The definition a bound run is checked against. */
export interface CheckedDefinition {
  readonly name: string;
  readonly version: number;
}

/**
 * What {@link checkRunInvariant} found:
 * - `unbound`: the run has no definition; nothing to check (it ends as it always did);
 * - `no_invariant`: its definition states none;
 * - `holds` / `fails` (with the clause): the invariant's answer, for the steps as `seen`;
 * - `unanswered`: nobody could say (a lookup threw or timed out, the definition is not registered here,
 *   this process has no lookups). Never a pass: the run does not end on it (see the callers).
 *
 * `seen` fingerprints the steps the answer was given for ({@link readStepsSeen}); the transaction that
 * ends the run compares it under the run's lock, so an answer about other steps is never applied.
 */
export type InvariantCheck =
  | { readonly kind: 'unbound' }
  | { readonly kind: 'no_invariant'; readonly definition: CheckedDefinition }
  | {
      readonly kind: 'holds';
      readonly definition: CheckedDefinition;
      readonly ending: InvariantEnding;
      readonly seen: string;
    }
  | {
      readonly kind: 'fails';
      readonly definition: CheckedDefinition;
      readonly ending: InvariantEnding;
      readonly seen: string;
      readonly clause: string;
    }
  | { readonly kind: 'unanswered'; readonly definition: CheckedDefinition; readonly why: string };

/** `name@version`, as reasons and logs name a definition. */
export const definitionLabel = (d: CheckedDefinition): string => `${d.name}@${d.version}`;

/**
 * Checks the invariant of a bound run's definition against the real systems, **outside any transaction**:
 * the lookups are slow HTTP reads, and nothing may hold the run's lock while they wait. Reads the run and
 * its steps without a lock, asks the invariant, and returns its answer with the fingerprint of the steps it
 * was asked about; the caller then ends the run by compare-and-set in its own transaction, comparing the
 * fingerprint ({@link readStepsSeen}) under the run's lock.
 *
 * `tenantId`, when given, limits the read to that tenant's run (the API's caller): another tenant's run is
 * `unbound` here and NotFound in the transaction that follows, so nothing about it is read from a vendor.
 */
export async function checkRunInvariant(
  db: SagaDb,
  target: { readonly runId: string; readonly tenantId?: string },
  ending: InvariantEnding,
  checker: InvariantChecker | undefined,
): Promise<InvariantCheck> {
  let q = db
    .selectFrom('runs')
    .select(['run_id', 'tenant_id', 'definition_name', 'definition_version'])
    .where('run_id', '=', target.runId);
  if (target.tenantId !== undefined) q = q.where('tenant_id', '=', target.tenantId);
  const run = await q.executeTakeFirst();
  if (!run || run.definition_name === null || run.definition_version === null) return { kind: 'unbound' };
  const definition = { name: run.definition_name, version: run.definition_version };
  if (!checker)
    return { kind: 'unanswered', definition, why: 'this process has no lookups to check the invariant with' };
  const def = checker.definitions.get(definition.name, definition.version);
  if (!def)
    return {
      kind: 'unanswered',
      definition,
      why: `definition ${definitionLabel(definition)} is not registered in this process`,
    };
  if (!def.invariant) return { kind: 'no_invariant', definition };
  const steps = await db
    .selectFrom('saga_log')
    .select(['step_idx', 'step_id', 'tool', 'status', 'args', 'external_ref', 'result', 'updated_at'])
    .where('run_id', '=', run.run_id)
    .orderBy('step_idx')
    .execute();
  const input: InvariantRun = {
    runId: run.run_id,
    tenantId: run.tenant_id,
    definition,
    ending,
    steps: steps.map((s) => ({
      stepIdx: s.step_idx,
      stepId: s.step_id,
      tool: s.tool,
      status: s.status,
      args: s.args,
      externalRef: s.external_ref,
      result: s.result,
    })),
  };
  const seen = fingerprint(steps.length, maxTime(steps.map((s) => s.updated_at)));
  const signal = AbortSignal.timeout(checker.timeoutMs ?? DEFAULT_INVARIANT_TIMEOUT_MS);
  const logger = checker.logger.child({ runId: run.run_id, definition: definitionLabel(definition) });
  const lookups = boundLookups(checker.lookups, signal, logger);
  try {
    const verdict = await Promise.race([def.invariant(input, lookups), rejectOnAbort(signal)]);
    if (verdict.holds) return { kind: 'holds', definition, ending, seen };
    return { kind: 'fails', definition, ending, seen, clause: verdict.clause };
  } catch (err) {
    // The message only: a vendor error names the request, never its credentials (see the connectors).
    const why = err instanceof Error ? err.message : String(err);
    logger.warn({ ending, why }, 'invariant could not be checked; the run does not end on it');
    return { kind: 'unanswered', definition, why: `a lookup could not answer: ${why}` };
  }
}

/**
 * The fingerprint of a run's steps as they stand: how many, and the latest change of any (`updated_at`
 * moves with every transition). Read in the ending transaction under the run's lock and compared with the
 * check's `seen`: equal means the invariant answered about exactly these steps.
 */
export async function readStepsSeen(trx: SagaTrx, runId: string): Promise<string> {
  const r = await sql<{ n: number; latest: Date | null }>`
    SELECT count(*)::int AS n, max(updated_at) AS latest FROM saga_log WHERE run_id = ${runId}`.execute(trx);
  const row = r.rows[0];
  return fingerprint(row?.n ?? 0, row?.latest ?? null);
}

const fingerprint = (n: number, latest: Date | null): string =>
  `${n}:${latest === null ? '-' : new Date(latest).toISOString()}`;

function maxTime(ts: readonly Date[]): Date | null {
  let max: Date | null = null;
  for (const t of ts) if (max === null || t > max) max = t;
  return max;
}

/** The module's lookups with the check's signal and logger; a name it does not export cannot answer. */
function boundLookups(lookups: ToolModuleLookups, signal: AbortSignal, logger: Logger): InvariantLookups {
  const target: InvariantLookups = {};
  return new Proxy(target, {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      const fn = Object.hasOwn(lookups, name) ? lookups[name] : undefined;
      if (!fn)
        return () => Promise.reject(new Error(`the tool module exports no lookup ${JSON.stringify(name)}`));
      return (id: string) => fn(id, { signal, logger });
    },
  });
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    signal.addEventListener('abort', () => reject(new Error('the check timed out')), { once: true });
  });
}
