/**
 * Postgres's CPU for the inline path's two statements alone, without HTTP, Node's share or other sessions in
 * the figure: `recordNewIntents` writing each step claimed at intake, then `recordOutcomeBatch` settling and
 * delivering it, in groups as the API sends them under load, on one connection whose backend's CPU is read
 * from `/proc/<pid>/schedstat` (Linux; nanoseconds, where `/proc/<pid>/stat` counts 10 ms ticks) around each
 * statement. What it answers: how a change to those statements, their plans or the schema moves the
 * database's cost per call, with a repeatable figure on a shared machine (the full bench's per-process CPU
 * varies with what else runs). It prints the total per call, each statement's CPU and wall time per group,
 * and this process's own CPU per call (`clientCpuUsPerCall`: what the API's Node spends sending the two
 * statements and reading their rows, plus two constants of this script: making the items, and the four
 * schedstat reads a group that time the statements, a few µs per call).
 *
 *   tsx bench/hot-statements-cpu.ts
 *
 * Environment (besides `DATABASE_URL`, as `pnpm bench` reads it): `HOT_GROUP` calls per statement (16),
 * `HOT_ROUNDS` groups (300, the first 20 not counted), `HOT_POOL` `group` (the role's group pool:
 * `groupedStatements`, plans made once) or `custom` (a plan per execution, the other statements' pool),
 * `HOT_GROW` settled steps added without ANALYZE after the plans are made and before the measurement (0):
 * a plan made on an empty log, used on a large one; `HOT_CHECK=true`: each call a step of its own run (as
 * the bench's lanes call) and not repeatable, so the duplicate check reads the run's earlier steps (0 to
 * 19 of them). It works in a schema of its own and drops it.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { z } from 'zod';
import {
  createDb,
  migrateToLatest,
  parseConfig,
  payloadHash,
  recordNewIntents,
  recordOutcomeBatch,
  StepStatus,
  stepKey,
  type NewIntent,
  type SagaDb,
} from '@agent-saga/core';
import { loadBenchConfig } from './bench-config.js';

const { DATABASE_URL: url } = loadBenchConfig([]);
const options = parseConfig(
  z.object({
    HOT_GROUP: z.coerce.number().int().positive().default(16),
    HOT_ROUNDS: z.coerce.number().int().min(21).default(300),
    HOT_POOL: z.enum(['group', 'custom']).default('group'),
    HOT_GROW: z.coerce.number().int().min(0).default(0),
    HOT_CHECK: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
  }),
  process.env,
);
const WARM_ROUNDS = 20;
const STEPS_PER_RUN = 20;
const schema = `hot_${Date.now()}`;

const setup = createDb({ url, schema, poolSize: 1 });
await migrateToLatest(setup, schema);
const runIds = Array.from(
  // Enough for either shape: HOT_GROUP runs per STEPS_PER_RUN rounds.
  { length: Math.ceil(options.HOT_ROUNDS / STEPS_PER_RUN) * options.HOT_GROUP },
  (_, i) => `hot-${i}`,
);
await sql`INSERT INTO runs (run_id, tenant_id, status)
          SELECT unnest(${runIds}::text[]), 'bench', 'RUNNING'`.execute(setup);
await setup.destroy();

const db = createDb({ url, schema, poolSize: 1, groupedStatements: options.HOT_POOL === 'group' });
const backend = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db)).rows[0]!.pid;

/** The backend's time on a CPU so far, in ms (the first field of its schedstat, in nanoseconds). */
function backendCpuMs(): number {
  return Number(readFileSync(`/proc/${backend}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

/** Per statement, summed over the measured rounds: the backend's CPU and the wall time, in ms. */
const spent = { intake: { cpu: 0, wall: 0 }, outcome: { cpu: 0, wall: 0 } };

/** Runs `statement`, adding the backend's CPU and the wall time it took to `into`. */
async function timed<T>(into: { cpu: number; wall: number }, statement: () => Promise<T>): Promise<T> {
  const cpu = backendCpuMs();
  const wall = performance.now();
  const result = await statement();
  into.wall += performance.now() - wall;
  into.cpu += backendCpuMs() - cpu;
  return result;
}

async function round(r: number): Promise<void> {
  const items: NewIntent[] = Array.from({ length: options.HOT_GROUP }, (_, g) => {
    const n = r * options.HOT_GROUP + g;
    // With the check, as the bench's lanes call: each item a step of its own run, its earlier steps written.
    const runId = options.HOT_CHECK
      ? runIds[Math.floor(r / STEPS_PER_RUN) * options.HOT_GROUP + g]!
      : runIds[Math.floor(n / STEPS_PER_RUN)]!;
    const stepIdx = options.HOT_CHECK ? r % STEPS_PER_RUN : n % STEPS_PER_RUN;
    return {
      runId,
      stepIdx,
      tenantId: 'bench',
      tool: 'noop',
      toolClass: 'compensatable',
      toolVersion: 1,
      idempotencyKey: stepKey(runId, stepIdx, 'noop', null),
      args: { n },
      payloadHash: payloadHash('noop', { n }),
      compensation: null,
      correction: null,
      audience: [],
      dependsOn: null,
      operation: options.HOT_CHECK ? { tool: 'noop', args: { n }, identity: null } : null,
      claim: { owner: 'hot', leaseMs: 30_000, cause: 'api: claimed at intake' },
    };
  });
  const written = await timed(spent.intake, () => recordNewIntents(db, items, 2_000));
  if (written.some((row) => row === null)) throw new Error(`round ${r}: the intake wrote nothing for a step`);
  const settled = await timed(spent.outcome, () =>
    recordOutcomeBatch(
      db,
      'hot',
      items.map((i) => ({
        runId: i.runId,
        stepIdx: i.stepIdx,
        deliver: true,
        outcome: { status: StepStatus.CONFIRMED, effect: { externalRef: null, result: { ok: true } } },
      })),
      schema,
    ),
  );
  if (settled.length !== items.length) throw new Error(`round ${r}: an outcome was not recorded`);
}

/** Adds `rows` settled steps in runs of their own through another connection, and analyses nothing. */
async function grow(rows: number, keepAlive: SagaDb): Promise<void> {
  // The measured connection stays busy meanwhile, so the pool does not close it (and its plans) as idle.
  const ping = setInterval(() => void sql`SELECT 1`.execute(keepAlive), 1_000);
  const other = createDb({ url, schema, poolSize: 1 });
  try {
    for (const t of ['saga_log', 'runs', 'step_event_rows'])
      await sql`ALTER TABLE ${sql.id(t)} SET (autovacuum_enabled = off)`.execute(other);
    await sql`INSERT INTO runs (run_id, tenant_id, status)
              SELECT 'old-' || g, 'bench', 'COMPLETED' FROM generate_series(0, ${Math.ceil(rows / STEPS_PER_RUN)}) g`.execute(
      other,
    );
    await sql`INSERT INTO saga_log (run_id, step_idx, tenant_id, tool, tool_class, tool_version, idempotency_key,
                                    args, payload_hash, status, audience, attempts, outcome_delivered)
              SELECT 'old-' || (g / ${STEPS_PER_RUN}), g % ${STEPS_PER_RUN}, 'bench', 'noop', 'compensatable', 1,
                     md5(g::text), '{}', decode(md5(g::text), 'hex'), 'CONFIRMED', '{}', 1, true
                FROM generate_series(0, ${rows - 1}) g`.execute(other);
  } finally {
    clearInterval(ping);
    await other.destroy();
  }
}

try {
  for (let r = 0; r < WARM_ROUNDS; r++) await round(r);
  if (options.HOT_GROW > 0) await grow(options.HOT_GROW, db);
  const same = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db)).rows[0]!.pid;
  if (same !== backend) throw new Error('the measured connection was replaced; its plans with it');
  for (const s of [spent.intake, spent.outcome]) s.cpu = s.wall = 0;
  const cpu0 = backendCpuMs();
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  for (let r = WARM_ROUNDS; r < options.HOT_ROUNDS; r++) await round(r);
  const client = process.cpuUsage(client0);
  const groups = options.HOT_ROUNDS - WARM_ROUNDS;
  const calls = groups * options.HOT_GROUP;
  const perGroup = (s: { cpu: number; wall: number }) => ({
    postgresCpuMs: Number((s.cpu / groups).toFixed(3)),
    wallMs: Number((s.wall / groups).toFixed(3)),
  });
  console.log(
    JSON.stringify({
      ...options,
      calls,
      postgresCpuUsPerCall: Math.round(((backendCpuMs() - cpu0) * 1000) / calls),
      perGroup: { intake: perGroup(spent.intake), outcome: perGroup(spent.outcome) },
      clientCpuUsPerCall: Math.round((client.user + client.system) / calls),
      wallUsPerCall: Math.round(((performance.now() - t0) * 1000) / calls),
    }),
  );
} finally {
  await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(db);
  await db.destroy();
}
