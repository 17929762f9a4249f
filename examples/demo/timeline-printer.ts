/**
 * The run's timeline as the log tells it (`GET /v1/runs/{id}/events`): every transition, attempt, retry
 * and lookup of every step, compensations included, one line each: time since the run's first event, step,
 * tool (the compensation tool after ↩), kind, from → to, and the cause the harness recorded.
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
    const step = steps.get(e.stepIdx);
    const comp = e.kind === 'compensation' ? compensationTool(step?.compensation) : undefined;
    const tool = comp ? `↩ ${comp}` : (step?.tool ?? '?');
    const seconds = ((Date.parse(e.at) - t0) / 1000).toFixed(3).padStart(7);
    const move = e.from !== null || e.to !== null ? `${e.from ?? '·'} → ${e.to ?? '·'}` : '';
    say(
      `  +${seconds}s  step ${e.stepIdx}  ${tool.padEnd(17)} ${e.kind.padEnd(12)} ${move.padEnd(26)} ${e.cause}${detailOf(e)}`,
    );
  }
  // Run-level transitions are not step events; the run row keeps only the last one and when it happened.
  const updatedAt = typeof run.updatedAt === 'string' ? Date.parse(run.updatedAt) : Number.NaN;
  const last = Number.isNaN(updatedAt) ? '      ?' : ((updatedAt - t0) / 1000).toFixed(3).padStart(7);
  say(`  +${last}s  run     ${run.status} (${run.statusReason ?? ''})`);
}
