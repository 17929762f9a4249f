/**
 * The reconciler as a real process, beside a real relay and executor, settling what an executor left
 * unknown: found → CONFIRMED; not found → believed only after the tool's lookup lag and a re-check, then
 * NOT_EXECUTED and re-dispatched (the executor runs it once); a lapsed INTENDED the same way; a lookup that
 * keeps failing → backoff, then MANUAL_INTERVENTION with its evidence; two effects under one key → an
 * incident, counted and logged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { StepEventKind, StepStatus, type StepEventRow } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { createFixtureTestEnv } from '../../../test/fixtures/fixture-test-env.js';
import { effectsFor, FaultKind, injectFault } from '../../../test/fixtures/effect-tools.js';
import {
  eventsOf,
  killAll,
  startRole,
  waitFor,
  waitForStatus,
  type RoleProcess,
} from '../../../test/fixtures/dispatcher-processes.js';
import { freePort } from '@agent-saga/core';
import {
  lapsedIntent,
  mustRead,
  scrape,
  startReconciler,
  unknownStep,
  waitForLog,
  type ReconcilerProcess,
  type UnsettledStep,
} from './reconciler-harness.js';

/** The fixture system's search shows a new effect only after 2 s. */
const LAG_MS = 2_000;
const MAX_LOOKUP_ERRORS = 3;
const BACKOFF_BASE_MS = 300;

let env: TestEnv;
let fx: Kysely<unknown>;
let metricsPort: number;
let reconciler: ReconcilerProcess;
const procs: RoleProcess[] = [];

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('recon'));
  const toolEnv = { FIXTURE_TOOL_TIMEOUT_MS: '1000' };
  procs.push(startRole(env, 'relay', toolEnv), startRole(env, 'executor', toolEnv));
  metricsPort = await freePort();
  reconciler = startReconciler(env, {
    FIXTURE_LOOKUP_LAG_MS: String(LAG_MS),
    RECONCILER_MAX_LOOKUP_ERRORS: String(MAX_LOOKUP_ERRORS),
    RECONCILER_BACKOFF_BASE_MS: String(BACKOFF_BASE_MS),
    METRICS_PORT: String(metricsPort),
  });
  await waitForLog(reconciler, 'reconciler started');
});
afterAll(async () => {
  await reconciler?.stop('SIGKILL');
  await killAll(procs);
  await env?.close();
});

const lookupsOf = async (s: UnsettledStep): Promise<StepEventRow[]> =>
  (await eventsOf(env.db, s.runId, s.stepIdx)).filter((e) => e.kind === StepEventKind.LOOKUP);
const transitionsOf = async (s: UnsettledStep) =>
  (await eventsOf(env.db, s.runId, s.stepIdx))
    .filter((e) => e.kind === StepEventKind.TRANSITION)
    .map((e) => [e.from_status, e.to_status, e.cause]);

describe('reconciler', () => {
  it('confirms an UNKNOWN step whose effect exists, with its ref; the effect stays one', async () => {
    const s = await unknownStep(env, 'run-found', { effects: 1 });
    const [effect] = await effectsFor(fx, s.key);
    const row = await waitForStatus(env.db, s.key, [StepStatus.CONFIRMED], 10_000);
    expect(row.external_ref).toBe(`FX-${effect!.id}`);
    expect(row.result).toEqual({ id: `FX-${effect!.id}`, tool: 'create_note', state: 'open' });
    expect(row.reconcile_lease_owner).toBeNull();
    expect(await effectsFor(fx, s.key)).toHaveLength(1);
    expect((await transitionsOf(s)).at(-1)).toEqual([
      'UNKNOWN',
      'CONFIRMED',
      'reconciler: lookup found the effect',
    ]);
    const lookups = await lookupsOf(s);
    expect(lookups).toHaveLength(1);
    expect(lookups[0]!.detail).toMatchObject({ seen: 'found', externalRef: `FX-${effect!.id}` });
  });

  it('keeps an UNKNOWN step with no effect until the lookup lag has passed, then NOT_EXECUTED and re-dispatched: one effect', async () => {
    const s = await unknownStep(env, 'run-absent');
    const attemptedAt = (await mustRead(env, s.key)).last_attempt_at!.getTime();

    // Within the lag a "not found" proves nothing: looked up, still UNKNOWN, looked at again later.
    await waitFor('a lookup within the lag', async () => ((await lookupsOf(s)).length ? true : undefined));
    const early = await mustRead(env, s.key);
    expect(early.status).toBe('UNKNOWN');
    expect(early.next_reconcile_at!.getTime()).toBeGreaterThanOrEqual(attemptedAt + LAG_MS);
    expect((await lookupsOf(s))[0]!.detail).toMatchObject({ seen: 'absent' });

    const done = await waitForStatus(env.db, s.key, [StepStatus.CONFIRMED], 20_000);
    expect(done.attempts).toBe(2);
    expect(await effectsFor(fx, s.key)).toHaveLength(1);
    const events = await eventsOf(env.db, s.runId, s.stepIdx);
    const notExecuted = events.find((e) => e.to_status === 'NOT_EXECUTED')!;
    expect(notExecuted.from_status).toBe('UNKNOWN');
    expect(notExecuted.at.getTime()).toBeGreaterThanOrEqual(attemptedAt + LAG_MS);
    // The verdict rested on two lookups after the lag, a re-check apart.
    const verdictLookups = (notExecuted.detail as { lookups: { seen: string }[] }).lookups;
    expect(verdictLookups.map((l) => l.seen)).toEqual(['absent', 'absent']);
    expect((await transitionsOf(s)).slice(-3).map(([from, to]) => [from, to])).toEqual([
      ['UNKNOWN', 'NOT_EXECUTED'],
      ['NOT_EXECUTED', 'INTENDED'],
      ['INTENDED', 'CONFIRMED'],
    ]);
  });

  it('leaves an INTENDED step alone while its lease lives, then handles the lapsed lease the same way', async () => {
    const s = await lapsedIntent(env, 'run-lapsed', { leaseMs: 800 });
    const attemptedAt = (await mustRead(env, s.key)).last_attempt_at!.getTime();
    await new Promise((r) => setTimeout(r, 400));
    expect(await lookupsOf(s)).toHaveLength(0);
    expect((await mustRead(env, s.key)).status).toBe('INTENDED');

    const done = await waitForStatus(env.db, s.key, [StepStatus.CONFIRMED], 20_000);
    expect(done.attempts).toBe(2);
    expect(await effectsFor(fx, s.key)).toHaveLength(1);
    const path = (await transitionsOf(s)).slice(1).map(([from, to]) => [from, to]);
    // Looked up after the lease lapsed and before the lag had passed, the step becomes UNKNOWN first (a
    // sweep that comes only after the lag, on a loaded machine, may go straight to NOT_EXECUTED).
    const direct = path[0]![1] === 'NOT_EXECUTED';
    expect(path).toEqual([
      ...(direct ? [] : [['INTENDED', 'UNKNOWN']]),
      [direct ? 'INTENDED' : 'UNKNOWN', 'NOT_EXECUTED'],
      ['NOT_EXECUTED', 'INTENDED'],
      ['INTENDED', 'CONFIRMED'],
    ]);
    const notExecuted = (await eventsOf(env.db, s.runId, s.stepIdx)).find(
      (e) => e.to_status === 'NOT_EXECUTED',
    )!;
    expect(notExecuted.at.getTime()).toBeGreaterThanOrEqual(attemptedAt + LAG_MS);
  });

  it('confirms a lapsed INTENDED step whose effect exists without executing it again', async () => {
    const s = await lapsedIntent(env, 'run-lapsed-found', { leaseMs: 200, effects: 1 });
    const row = await waitForStatus(env.db, s.key, [StepStatus.CONFIRMED], 10_000);
    expect(row.attempts).toBe(1);
    expect(await effectsFor(fx, s.key)).toHaveLength(1);
    expect((await transitionsOf(s)).at(-1)?.slice(0, 2)).toEqual(['INTENDED', 'CONFIRMED']);
  });

  it('backs off a lookup that keeps failing, then hands the step to a person with every lookup as evidence', async () => {
    await injectFault(fx, 'send_notice', FaultKind.LOOKUP_ERROR, 100);
    const s = await unknownStep(env, 'run-lookup-error', { tool: 'send_notice', effects: 1 });

    const backingOff = await waitFor('a failed lookup', async () => {
      const row = await mustRead(env, s.key);
      return row.reconcile_attempts >= 1 ? row : undefined;
    });
    expect(backingOff.status).toBe('UNKNOWN');
    expect(backingOff.next_reconcile_at).not.toBeNull();

    const mi = await waitForStatus(env.db, s.key, [StepStatus.MANUAL_INTERVENTION], 15_000);
    expect(mi.reconcile_attempts).toBe(MAX_LOOKUP_ERRORS);
    const lookups = await lookupsOf(s);
    expect(lookups).toHaveLength(MAX_LOOKUP_ERRORS);
    expect(lookups.every((l) => (l.detail as { seen: string }).seen === 'error')).toBe(true);
    // Backoff with equal jitter: the n-th wait is at least half of base · 2^(n-1).
    const at = lookups.map((l) => l.at.getTime());
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(BACKOFF_BASE_MS / 2);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(BACKOFF_BASE_MS);

    const gaveUp = (await eventsOf(env.db, s.runId, s.stepIdx)).find(
      (e) => e.to_status === 'MANUAL_INTERVENTION',
    )!;
    const detail = gaveUp.detail as { lookupErrors: number; evidence: { seen: string; at: string }[] };
    expect(detail.lookupErrors).toBe(MAX_LOOKUP_ERRORS);
    expect(detail.evidence).toHaveLength(MAX_LOOKUP_ERRORS);
    expect(detail.evidence.map((e) => e.seen)).toEqual(['error', 'error', 'error']);
    expect(detail.evidence.every((e) => typeof e.at === 'string')).toBe(true);
    expect(await effectsFor(fx, s.key)).toHaveLength(1);
    await sql`DELETE FROM fixture_faults`.execute(fx);
  });

  it('records two effects under one key as an incident (event, metric, error log) and confirms the first', async () => {
    const s = await unknownStep(env, 'run-duplicate', { effects: 2 });
    const [first, second] = await effectsFor(fx, s.key);
    const row = await waitForStatus(env.db, s.key, [StepStatus.CONFIRMED], 10_000);
    expect(row.external_ref).toBe(`FX-${first!.id}`);
    const incident = (await lookupsOf(s)).find((e) => (e.detail as { incident?: string }).incident);
    expect(incident?.detail).toMatchObject({
      incident: 'duplicate_effect',
      kept: `FX-${first!.id}`,
      duplicates: [`FX-${first!.id}`, `FX-${second!.id}`],
    });
    expect(await scrape(metricsPort, 'saga_duplicate_effect_incidents_total')).toBe(1);
    await waitFor('the incident log line', () =>
      reconciler.output().includes('duplicate effects under one key') ? true : undefined,
    );
  });

  it('counts results by outcome and lookup errors', async () => {
    expect(await scrape(metricsPort, 'saga_reconcile_results_total', { outcome: 'confirmed' })).toBe(3);
    expect(await scrape(metricsPort, 'saga_reconcile_results_total', { outcome: 'not_executed' })).toBe(2);
    expect(
      await scrape(metricsPort, 'saga_reconcile_results_total', { outcome: 'manual_intervention' }),
    ).toBe(1);
    expect(await scrape(metricsPort, 'saga_reconcile_lookup_errors_total')).toBe(MAX_LOOKUP_ERRORS);
    expect(await scrape(metricsPort, 'saga_reconcile_redispatched_total')).toBe(2);
    expect(await scrape(metricsPort, 'saga_unknown_steps')).toBe(0);
  });

  it('drains on SIGTERM and exits 0', async () => {
    expect((await reconciler.stop('SIGTERM')).code).toBe(0);
    expect(reconciler.output()).toContain('"msg":"drained"');
  });
});
