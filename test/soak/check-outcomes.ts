/**
 * Checks about the runs, from the saga log: every agent got to the end of its script; every run ended in
 * the terminal status its story calls for (COMPLETED when the warehouse shipped and the agent completed
 * the run, COMPENSATED when it refused and the agent unwound); no step is left INTENDED or UNKNOWN, no
 * compensation unsettled, nothing waits for a person. Each offender is listed with what a person debugging
 * it needs: run, order, agent temper, step, status, attempts, age, and whether its outbox message was ever
 * published (and under which job id).
 */
import type { AgentResult } from './scripted-agent.js';
import type { LoggedStep, SagaLogView } from './read-saga-log.js';
import { checkNone, type Check } from './soak-report.js';

const UNRESOLVED = new Set(['INTENDED', 'UNKNOWN']);
const UNSETTLED_COMPENSATION = new Set(['pending', 'running', 'unknown', 'failed']);

function describeStep(s: LoggedStep, now: number): string {
  const outbox =
    s.outbox.length === 0
      ? 'no outbox message'
      : s.outbox
          .map(
            (o) =>
              `job ${o.jobId} ${o.publishedAt ? `published ${o.publishedAt.toISOString()}` : 'unpublished'}`,
          )
          .join(', ');
  return (
    `run ${s.runId} step ${s.stepIdx} ${s.tool}: ${s.status}, attempts ${s.attempts}, ` +
    `created ${((now - s.createdAt.getTime()) / 1000).toFixed(0)} s ago, last change ` +
    `${((now - s.updatedAt.getTime()) / 1000).toFixed(0)} s ago; ${s.lookups} lookups; ` +
    `last event ${s.lastEvent ?? 'none'}; ${outbox}`
  );
}

export function checkOutcomes(results: readonly AgentResult[], log: SagaLogView): Check[] {
  const now = Date.now();
  const stepsOf = (runId: string) => log.steps.filter((s) => s.runId === runId);
  const runLine = (r: AgentResult) => {
    const run = log.runs.get(r.plan.runId);
    const steps = stepsOf(r.plan.runId)
      .map((s) => `${s.stepIdx} ${s.tool} ${s.status} (${s.attempts} attempts)`)
      .join('; ');
    return (
      `run ${r.plan.runId} (order ${r.plan.orderId}, ${r.plan.temper} agent, agent ${r.ending}): ` +
      `${run ? `${run.status}${run.statusReason ? ` — ${run.statusReason}` : ''}` : 'never created'}; steps: ${steps || 'none'}`
    );
  };
  const expected = (r: AgentResult) => (r.plan.refused ? 'COMPENSATED' : 'COMPLETED');
  const happy = results.filter((r) => !r.plan.refused);
  const refused = results.filter((r) => r.plan.refused);
  const wrong = (rs: readonly AgentResult[]) =>
    rs.filter((r) => log.runs.get(r.plan.runId)?.status !== expected(r)).map(runLine);
  const unresolved = log.steps.filter((s) => UNRESOLVED.has(s.status));
  const requests = results.reduce((n, r) => n + r.requests, 0);
  const unavailable = results.reduce((n, r) => n + r.unavailable, 0);

  return [
    checkNone(
      'every agent played its script to the end (complete, or unwind after the refusal)',
      results.filter((r) => r.ending === 'gave up').map((r) => `${runLine(r)}\n${r.notes.join('\n')}`),
      [
        `${results.length} agents (${results.filter((r) => r.plan.temper === 'patient').length} patient, ` +
          `${results.filter((r) => r.plan.temper === 'eager').length} eager), ${requests} requests, ` +
          `${unavailable} answered by no dispatcher (connection refused or 5xx) and tried again`,
      ],
    ),
    checkNone(`every happy run ended COMPLETED (${happy.length} runs)`, wrong(happy)),
    checkNone(
      `every run whose reship the warehouse refused ended COMPENSATED (${refused.length} runs)`,
      wrong(refused),
    ),
    checkNone(
      'no step is left INTENDED or UNKNOWN',
      unresolved.map((s) => describeStep(s, now)),
      [`${log.steps.length} steps in the log`],
    ),
    checkNone(
      'no compensation is left unsettled (pending, running, unknown or failed)',
      log.compensations
        .filter((c) => UNSETTLED_COMPENSATION.has(c.status))
        .map(
          (c) =>
            `run ${c.runId} step ${c.stepIdx} ${c.tool ?? '(skipped)'}: ${c.status}, attempts ${c.attempts}`,
        ),
      [`${log.compensations.length} compensations in the log`],
    ),
    checkNone('nothing waits for a person (no step in MANUAL_INTERVENTION or NOT_EXECUTED, no open case)', [
      ...log.steps
        .filter((s) => s.status === 'MANUAL_INTERVENTION' || s.status === 'NOT_EXECUTED')
        .map((s) => describeStep(s, now)),
      ...log.openCases.map((c) => `open case on run ${c.runId} step ${String(c.stepIdx)}: ${c.reason}`),
    ]),
  ];
}
