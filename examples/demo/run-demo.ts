/**
 * `pnpm demo`: the mission's opening incident, end to end, with real processes, then the same incident
 * without the harness, and the damage of both side by side. `pnpm demo:pivot` (`--pivot`): the
 * refund-and-reship run reordered around a pivot, approved by an operator once and rejected once;
 * `--interactive` leaves both decisions to a person with the CLI. After `pnpm install && pnpm bootstrap`.
 *
 * 1. Set-up: a fresh schema (dropped and re-migrated), a queue prefix of its own, an agent token; the
 *    sandbox, the dispatcher's api, relay and executor, the reconciler and the compensator, each its own
 *    process.
 * 2. The story: incident-story.ts (the harness, then the naive agent) or pivot-story.ts (the pivot).
 * 3. Every process stopped (SIGTERM, then SIGKILL), the schema and the queues dropped, whatever happened.
 *
 * Exits 0 only if the story came out as told (story-checks.ts, pivot-checks.ts): the demo doubles as a
 * smoke test. A bad argument exits 2 with the usage line.
 */
import { sql } from 'kysely';
import { createSagaClient } from '@agent-saga/client';
import { createApiToken, createDb, migrateToLatest } from '@agent-saga/core';
import { parseDemoArgs, type DemoContext, type DemoOptions } from './demo-context.js';
import { loadDemoConfig } from './demo-config.js';
import { dropQueues } from '@agent-saga/core/testing';
import { startHarness } from './harness-processes.js';
import { tellIncidentStory } from './incident-story.js';
import { heading, say } from './narration.js';
import { tellPivotStory } from './pivot-story.js';
import { ProcessSupervisor } from './process-supervisor.js';
import { startSandboxProcess } from './sandbox-admin.js';

async function main(options: DemoOptions): Promise<number> {
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
    const token = await createApiToken(db, { tenantId: 'acme', role: 'agent', label: 'demo-agent' });
    // The sandbox and the roles start side by side: the sandbox's URLs are chosen before it starts.
    const sandbox = await startSandboxProcess(supervisor);
    const harness = await startHarness(supervisor, config, sandbox.urls);
    await sandbox.ready();
    say(`  sandbox (admin ${sandbox.urls.admin}) and api, relay, executor, reconciler, compensator`);
    say(`  (api ${harness.baseUrl}) up at ${elapsed()}`);
    const saga = createSagaClient({ baseUrl: harness.baseUrl, token });

    const ctx: DemoContext = { db, sandbox, harness, agentToken: token, saga, options };
    failures.push(...(await (options.pivot ? tellPivotStory(ctx) : tellIncidentStory(ctx))));

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

let options: DemoOptions;
try {
  options = parseDemoArgs(process.argv.slice(2));
} catch (e) {
  console.error(`pnpm demo: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}
main(options).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`pnpm demo: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
