/**
 * The run's timeline as the log tells it (`GET /v1/runs/{id}/events`): every transition, attempt, retry
 * and lookup of every step, compensations included, and the run's own events (its status changes, a
 * person's decision about the whole run; `stepIdx` null), one line each: time since the run's first event,
 * step (or `run`), tool (the compensation tool after ↩), kind, from → to, the cause the harness recorded
 * and, for what a person did, who.
 */
import type { RunView, StepEvent } from '@agent-saga/client';
import { say } from './narration.js';

/** The compensation tool a step stored before its forward call (`{ tool, args }`), if any. */
function compensationTool(compensation: unknown): string | undefined {
  if (typeof compensation !== 'object' || compensation === null) return undefined;
  const tool = (compensation as Record<string, unknown>).tool;
  return typeof tool === 'string' ? tool : undefined;
}

/** A short, single-line rendering of what an event saw (reworded arguments, a lookup's answer). */
function detailOf(e: StepEvent): string {
  if (e.detail === null || e.detail === undefined) return '';
  if (e.kind !== 'retry_call' && e.kind !== 'lookup') return '';
  const text = JSON.stringify(e.detail);
  return text.length > 70 ? ` ${text.slice(0, 67)}…` : ` ${text}`;
}

export function printTimeline(run: RunView, events: readonly StepEvent[]): void {
  const steps = new Map(run.steps.map((s) => [s.stepIdx, s]));
  const t0 = events.length > 0 ? Date.parse(events[0]!.at) : 0;
  for (const e of events) {
    const step = e.stepIdx === null ? undefined : steps.get(e.stepIdx);
    const comp = e.kind === 'compensation' ? compensationTool(step?.compensation) : undefined;
    const tool = e.stepIdx === null ? '' : comp ? `↩ ${comp}` : (step?.tool ?? '?');
    const where = e.stepIdx === null ? 'run   ' : `step ${e.stepIdx}`;
    const seconds = ((Date.parse(e.at) - t0) / 1000).toFixed(3).padStart(7);
    const move = e.from !== null || e.to !== null ? `${e.from ?? '·'} → ${e.to ?? '·'}` : '';
    const who = typeof e.actor === 'string' ? ` [by ${e.actor}]` : '';
    say(
      `  +${seconds}s  ${where}  ${tool.padEnd(22)} ${e.kind.padEnd(14)} ${move.padEnd(30)} ${e.cause}${who}${detailOf(e)}`,
    );
  }
  // A dispatcher older than run-level events keeps only the run's last status and when it was set.
  if (events.some((e) => e.stepIdx === null)) return;
  const updatedAt = typeof run.updatedAt === 'string' ? Date.parse(run.updatedAt) : Number.NaN;
  const last = Number.isNaN(updatedAt) ? '      ?' : ((updatedAt - t0) / 1000).toFixed(3).padStart(7);
  say(`  +${last}s  run     ${run.status} (${run.statusReason ?? ''})`);
}

/** The run's status and every step as `GET /v1/runs/{id}` tells them, one line each. */
export function printRunSteps(run: RunView): void {
  const bound = run.definition ? `${run.definition.name}@${run.definition.version}` : '(none)';
  say(`  definition:   ${bound}`);
  say(`  status:       ${run.status}`);
  say(`  statusReason: ${run.statusReason ?? '(none)'}`);
  for (const s of run.steps)
    say(
      `  step ${s.stepIdx} ${s.tool.padEnd(19)} ${s.status.padEnd(10)} compensation ${s.compensationStatus ?? '-'}  ${s.externalRef ?? ''}` +
        (s.stepId ? `  (definition step ${s.stepId})` : ''),
    );
}
