/**
 * `pnpm example`: starts the dispatcher (api, relay and executor as three processes) on the sample tool
 * module and plays a scripted agent against it, the way a model would behave:
 *
 *  1. a pure order lookup (no log row);
 *  2. create_ticket, whose gateway answers 504 after the ticket was made: the harness says UNKNOWN;
 *  3. the model retries with reworded arguments: same step, same key, the ticket is found by key, not made
 *     twice;
 *  4. the model changes the order id on a retry: refused, because that would be a different intent;
 *  5. an email to the customer: irreversible, so it is held for a human instead of being sent;
 *  6. the run as the log tells it, with every transition.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { createSagaClient, SagaApiError, ToolOutcomeUnknown } from '@agent-saga/client';
import { createApiToken, createDb, freePort, migrateToLatest } from '@agent-saga/core';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
if (existsSync(resolve(root, '.env'))) process.loadEnvFile(resolve(root, '.env'));
const databaseUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!databaseUrl || !redisUrl) {
  console.error('DATABASE_URL and REDIS_URL are needed: run `pnpm bootstrap` first.');
  process.exit(2);
}

const schema = 'saga_example';
const say = (line = '') => console.log(line);
const step = (n: number, text: string) => say(`\n\x1b[1m${n}. ${text}\x1b[0m`);

async function main(): Promise<void> {
  const db = createDb({ url: databaseUrl!, schema });
  await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
  await migrateToLatest(db, schema);
  const token = await createApiToken(db, { tenantId: 'acme', role: 'agent', label: 'example' });

  const port = await freePort();
  say(`starting the dispatcher (api :${port}, relay, executor) on examples/support-tools.ts …`);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', resolve(root, 'services/dispatcher/src/bin/all.ts')],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        REDIS_URL: redisUrl,
        SAGA_DB_SCHEMA: schema,
        SAGA_QUEUE_PREFIX: `example-${Date.now()}`,
        SAGA_TOOLS: resolve(root, 'examples/support-tools.ts'),
        EXAMPLE_FIRST_CALL_504: '1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        LOOKUP_RECHECK_MS: '200',
      },
    },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      const ok = await fetch(`${baseUrl}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (i > 120) throw new Error('the dispatcher did not become ready in 60 s');
      await new Promise((r) => setTimeout(r, 500));
    }
    const saga = createSagaClient({ baseUrl, token });
    const { runId } = await saga.createRun({
      runId: `order-1182-${Date.now()}`,
      metadata: { customer: 'c_42' },
    });
    say(`run ${runId} created`);

    step(1, 'lookup_order (pure): runs at once, writes no log row');
    const order = await saga.call(runId, 'lookup_order', { orderId: '1182' }, { stepIdx: 0 });
    say(`   → ${order.status} ${JSON.stringify('result' in order ? order.result : null)}`);

    step(2, 'create_ticket: the ticket is created, then the gateway answers 504');
    try {
      await saga.call(
        runId,
        'create_ticket',
        { summary: 'Refund for order #1182', orderId: '1182' },
        { stepIdx: 0 },
      );
    } catch (e) {
      if (!(e instanceof ToolOutcomeUnknown)) throw e;
      say(`   → UNKNOWN (key ${e.idempotencyKey})`);
      say(`     message to the model: "${e.message}"`);
    }

    step(3, "the model retries with reworded arguments ('Order #1182 refund')");
    const retry = await saga.call(
      runId,
      'create_ticket',
      { summary: 'Order #1182 refund', orderId: '1182' },
      { stepIdx: 0 },
    );
    if (retry.status === 'CONFIRMED')
      say(
        `   → CONFIRMED ${retry.externalRef}, replayed=${retry.replayed}, same key ${retry.idempotencyKey}`,
      );
    else say(`   → ${retry.status}`);

    step(4, 'the model retries step 0 with another order id');
    try {
      await saga.call(runId, 'create_ticket', { summary: 'Refund', orderId: '1183' }, { stepIdx: 0 });
    } catch (e) {
      if (!(e instanceof SagaApiError)) throw e;
      say(`   → ${e.status} ${e.code}: ${e.message}`);
    }

    step(5, 'send_customer_email: irreversible, so it waits for a human');
    const email = await saga.call(
      runId,
      'send_customer_email',
      { to: 'ada@example.com', template: 'refund' },
      { stepIdx: 1 },
    );
    say(`   → ${email.status}`);

    step(6, 'the run, as the log tells it (GET /v1/runs/{id})');
    const run = await saga.getRun(runId);
    say(`   run ${run.runId}: ${run.status}, cursor ${run.cursor}`);
    for (const s of run.steps)
      say(
        `   step ${s.stepIdx} ${s.tool.padEnd(20)} ${s.status.padEnd(18)} ${s.externalRef ?? ''}  key ${s.idempotencyKey}`,
      );
    const events = await saga.getEvents(runId);
    say('   timeline:');
    for (const e of events)
      say(
        `     ${new Date(e.at).toISOString().slice(11, 23)}  step ${e.stepIdx}  ${e.kind.padEnd(10)} ${e.from ?? '·'} → ${e.to ?? '·'}  ${e.cause}`,
      );

    const tickets = await sql<{ n: string }>`SELECT count(*) AS n FROM example_tickets`.execute(db);
    say(`\ntickets in the ticket system: ${tickets.rows[0]!.n} (a naive retry would have made 2)`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await db.destroy();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
