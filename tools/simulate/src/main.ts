/**
 * `pnpm simulate [--episodes N] [--seed S] [--harness agent-saga|naive|both] [--concurrency C] [--json]`:
 * seeded agent episodes under vendor faults, played by agent-saga (the real roles over HTTP) and by a naive
 * harness on the same episodes, graded from the vendors' ledgers (docs/simulation.md). Prints the tables,
 * or with `--json` one object `{ seed, episodes, totals, details, byFaultMode, byPolicy, durationMs }`.
 * Exit status: 0 when the run finished, 2 on a bad flag, 1 on a failure to run.
 */
import { resolve } from 'node:path';
import { formatSummary } from './print-summary.js';
import { runSimulation } from './run-simulation.js';
import type { GradedEpisode } from './summarize-grades.js';
import {
  parseSimulateOptions,
  SIMULATE_USAGE,
  UsageError,
  type SimulateOptions,
} from './simulate-options.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');

async function main(options: SimulateOptions): Promise<number> {
  // With --json, stdout carries the one object; progress goes to stderr.
  const say = (line: string) => (options.json ? process.stderr : process.stdout).write(`${line}\n`);
  say(
    `pnpm simulate: ${options.episodes} episodes, seed ${options.seed}, harness ${options.harnesses.join(' + ')}`,
  );
  const { summary, graded } = await runSimulation(options, REPO_ROOT, say);
  if (options.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else {
    say('');
    say(formatSummary(summary, options.harnesses));
  }
  // The episodes agent-saga did not get exactly once, each with what the ledger showed: where to look.
  for (const [h, list] of graded) {
    if (h !== 'agent-saga') continue;
    const wrong = list.filter((g) => g.grade.duplicate || g.grade.lost);
    const short = list.filter(
      (g) => g.grade.canSucceed && !g.grade.exactlyOnce && !g.grade.duplicate && !g.grade.lost,
    );
    // The agent said done or cleanly undone, and the ledger says otherwise, beyond the lists above.
    const claimed = list.filter(
      (g) => g.grade.reportedSuccessWhenWrong && !wrong.includes(g) && !short.includes(g),
    );
    if (wrong.length > 0) say(`\n${h}: ${wrong.length} episodes with a duplicate or a lost effect:`);
    for (const g of wrong.slice(0, 20)) say(describe(g));
    if (short.length > 0)
      say(`\n${h}: ${short.length} episodes that could succeed and ended honestly undone or unsettled:`);
    for (const g of short.slice(0, 20)) say(describe(g));
    if (claimed.length > 0)
      say(`\n${h}: ${claimed.length} more episodes whose agent reported success or a clean undo, wrongly:`);
    for (const g of claimed.slice(0, 20)) say(describe(g));
  }
  return 0;
}

function describe(g: GradedEpisode): string {
  const e = g.record.episode;
  const faults = e.faults.map((f) => `${f.mode}@${f.write}`).join(',');
  return (
    `  #${e.index} ${e.workflow} faults ${faults} policies ${e.policies.join(',')} ` +
    `agent ${g.record.report}, run ${g.record.ending.runStatus ?? '-'}: ${g.grade.findings.join('; ') || 'nothing standing'}` +
    (g.record.notes?.length ? `\n      agent: ${g.record.notes.join('; ')}` : '')
  );
}

let options: SimulateOptions;
try {
  options = parseSimulateOptions(process.argv.slice(2), REPO_ROOT, process.env);
} catch (e) {
  if (!(e instanceof UsageError)) throw e;
  process.stderr.write(`pnpm simulate: ${e.message}\n${SIMULATE_USAGE}\n`);
  process.exit(2);
}
main(options).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`pnpm simulate: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
