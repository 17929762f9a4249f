/**
 * `pnpm demo`: the mission's opening incident, end to end, with real processes, then the same incident
 * without the harness, and the damage of both side by side. After `pnpm install && pnpm bootstrap`.
 *
 * 1. Set-up: a fresh schema (dropped and re-migrated), a queue prefix of its own, an agent token; the
 *    sandbox, the dispatcher's api, relay and executor, the reconciler and the compensator, each its own
 *    process.
 * 2. The harness story, played by a scripted agent (scripted-agent.ts); its timeline from the log; the
 *    run's terminal status, corrections and cases; the sandbox's ledger.
 * 3. The naive story against the reset sandbox (naive-agent.ts); its ledger and damage.
 * 4. Both ledgers' counts side by side.
 * 5. Every process stopped (SIGTERM, then SIGKILL), the schema and the queues dropped, whatever happened.
 *
 * Exits 0 only if the story came out as told (story-checks.ts): the demo doubles as a smoke test.
 */
import { sql } from 'kysely';
import { createSagaClient, type RunView } from '@agent-saga/client';
import { createApiToken, createDb, migrateToLatest } from '@agent-saga/core';
import { loadDemoConfig } from './demo-config.js';
import { dropQueues } from './drop-queues.js';
import { startHarness } from './harness-processes.js';
import { countLedger, printLedger, printSideBySide, type LedgerCounts } from './ledger-printer.js';
import { playNaiveAgent } from './naive-agent.js';
import { heading, say } from './narration.js';
import { ProcessSupervisor } from './process-supervisor.js';
import { startSandboxProcess } from './sandbox-admin.js';
import { playScriptedAgent, RUN_ID } from './scripted-agent.js';
import { harnessFailures, naiveDamage, naiveFailures, reviewSchema } from './story-checks.js';
import { printTimeline } from './timeline-printer.js';

const CUSTOMER_EMAIL = 'ada@example.com';

async function main(): Promise<number> {
  const startedAt = Date.now();
  const elapsed = () => `${((Date.now() - startedAt) / 1000).toFixed(1)} s`;
  const config = loadDemoConfig();
  const supervisor = new ProcessSupervisor();
  const db = createDb({ url: config.databaseUrl, schema: config.schema, poolSize: 2 });
  const failures: string[] = [];
  let interrupted = false;
  process.once('SIGINT', () => {
    interrupted = true;
    say('\ninterrupted: stopping every process …');
    void supervisor.stopAll(2_000).then(() => process.exit(130));
  });

  try {
    heading(`Set-up: schema ${config.schema}, queue prefix ${config.queuePrefix}`);
    await sql`DROP SCHEMA IF EXISTS ${sql.id(config.schema)} CASCADE`.execute(db);
    await migrateToLatest(db, config.schema);
    const token = await createApiToken(db, { tenantId: 'acme', role: 'agent', label: 'demo' });
    // The sandbox and the roles start side by side: the sandbox's URLs are chosen before it starts.
    const sandbox = await startSandboxProcess(supervisor);
    const harness = await startHarness(supervisor, config, sandbox.urls);
    await sandbox.ready();
    say(`  sandbox (admin ${sandbox.urls.admin}) and api, relay, executor, reconciler, compensator`);
    say(`  (api ${harness.baseUrl}) up at ${elapsed()}`);
    const saga = createSagaClient({ baseUrl: harness.baseUrl, token });

    heading('THE HARNESS: a scripted agent through agent-saga');
    const run: RunView = await playScriptedAgent({ saga, baseUrl: harness.baseUrl, token, sandbox, harness });

    heading(`Timeline of run ${RUN_ID} (GET /v1/runs/${RUN_ID}/events)`);
    printTimeline(run, await saga.getEvents(RUN_ID));
    const review = reviewSchema.parse(run);
    heading('The run, as the log tells it (GET /v1/runs/{id})');
    say(`  status:       ${run.status}`);
    say(`  statusReason: ${run.statusReason ?? '(none)'}`);
    for (const s of run.steps)
      say(
        `  step ${s.stepIdx} ${s.tool.padEnd(14)} ${s.status.padEnd(10)} compensation ${s.compensationStatus ?? '-'}  ${s.externalRef ?? ''}`,
      );
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

    for (const { proc, status } of await supervisor.unexpectedExits())
      failures.push(`${proc.name} exited on its own (${JSON.stringify(status)}):\n${proc.output(2_000)}`);
  } catch (e) {
    failures.push(`the story stopped: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  } finally {
    const stopping = Date.now();
    await supervisor.stopAll();
    say(`\n  every process stopped in ${((Date.now() - stopping) / 1000).toFixed(1)} s`);
    await sql`DROP SCHEMA IF EXISTS ${sql.id(config.schema)} CASCADE`
      .execute(db)
      .catch((e: unknown) => failures.push(`could not drop schema ${config.schema}: ${String(e)}`));
    await db.destroy();
    await dropQueues(config.redisUrl, config.queuePrefix).catch((e: unknown) =>
      failures.push(`could not drop queues ${config.queuePrefix}: ${String(e)}`),
    );
  }
  if (interrupted) return 130;
  if (failures.length > 0) {
    heading('THE STORY DID NOT COME OUT AS TOLD');
    for (const f of failures) say(`  ✗ ${f}`);
    heading('Output of each process (last lines)');
    for (const p of supervisor.processes) say(`--- ${p.name}\n${p.output(1_500) || '(nothing)'}`);
    return 1;
  }
  heading(`The story came out as told, in ${elapsed()} (set-up and clean-up included).`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`pnpm demo: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
