/**
 * `pnpm demo`'s story: the mission's opening incident through the harness (scripted-agent.ts), its
 * timeline, the run as the log tells it and the sandbox's ledger; then the same incident without the
 * harness against the reset sandbox (naive-agent.ts), its ledger and damage; then both ledgers' counts side
 * by side. Returns what did not come out as told (story-checks.ts), one line each.
 */
import type { RunView } from '@agent-saga/client';
import type { DemoContext } from './demo-context.js';
import { countLedger, printLedger, printSideBySide, type LedgerCounts } from './ledger-printer.js';
import { playNaiveAgent } from './naive-agent.js';
import { heading, say } from './narration.js';
import { playScriptedAgent, RUN_ID } from './scripted-agent.js';
import { harnessFailures, naiveDamage, naiveFailures, reviewSchema } from './story-checks.js';
import { printRunSteps, printTimeline } from './timeline-printer.js';

const CUSTOMER_EMAIL = 'ada@example.com';

export async function tellIncidentStory(ctx: DemoContext): Promise<string[]> {
  const { saga, sandbox, harness } = ctx;
  const failures: string[] = [];

  heading('THE HARNESS: a scripted agent through agent-saga');
  const run: RunView = await playScriptedAgent({
    saga,
    baseUrl: harness.baseUrl,
    token: ctx.agentToken,
    sandbox,
    harness,
  });

  heading(`Timeline of run ${RUN_ID} (GET /v1/runs/${RUN_ID}/events)`);
  printTimeline(run, await saga.getEvents(RUN_ID));
  const review = reviewSchema.parse(run);
  heading('The run, as the log tells it (GET /v1/runs/{id})');
  printRunSteps(run);
  say(`  corrections:  ${review.corrections.length === 0 ? 'none' : JSON.stringify(review.corrections)}`);
  say(`  cases:        ${review.cases.length === 0 ? 'none' : JSON.stringify(review.cases)}`);

  const harnessLedger = await sandbox.ledger();
  const harnessCounts: LedgerCounts = countLedger(harnessLedger, CUSTOMER_EMAIL);
  heading('The sandbox ledger after the harness (GET /__admin/ledger)');
  printLedger(harnessLedger);
  failures.push(...harnessFailures(harnessLedger, harnessCounts, run, review));

  heading('THE NAIVE AGENT: the same incident, no harness (sandbox reset)');
  await sandbox.reset();
  const naive = await playNaiveAgent(sandbox);
  const naiveLedger = await sandbox.ledger();
  const naiveCounts = countLedger(naiveLedger, CUSTOMER_EMAIL);
  const damage = naiveDamage(naiveLedger, naive);
  heading('The sandbox ledger after the naive agent');
  printLedger(naiveLedger);
  for (const g of damage.ghostCloses)
    say(
      `  ghost close: ${g.closed} closed as "the ticket"; ${g.leftOpen.join(', ')} (made by the 504'd call, never in the transcript) still open`,
    );
  if (damage.apologiesForUnseenCharges > 0)
    say(
      `  apology: ${damage.apologiesForUnseenCharges} email to ${CUSTOMER_EMAIL} about a charge the customer never saw (no receipt was sent)`,
    );
  failures.push(...naiveFailures(naiveCounts, damage));

  heading('Side by side (counted from the two ledgers)');
  printSideBySide(harnessCounts, naiveCounts);
  return failures;
}
