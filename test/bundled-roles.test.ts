/**
 * Roles started from their bundles (`agent-saga bundle`, one file per role with the tool module in it), as
 * `pnpm simulate` starts them: a call goes through the bundled api, relay and executor end to end; a tool's
 * rejection is still told apart from an unknown outcome (the executor and the tool module share one copy of
 * core's error classes, which a second copy loaded beside the bundle would break); an executor killed after
 * the effect leaves one effect, found by key; and a bundled role started with another `SAGA_TOOLS` than it
 * was built with refuses to start, naming the setting.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleRoles } from '@agent-saga/cli';
import { createSagaClient, ToolOutcomeUnknown, type SagaClient } from '@agent-saga/client';
import { createApiToken, CrashPoint, freePort, nodeArgsFor, stepKey } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { closeFixtureTestEnv, createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { effectsFor, FaultKind, injectFault } from './fixtures/effect-tools.js';
import {
  EFFECT_TOOLS,
  REPO_ROOT,
  readStep,
  roleEntry,
  startRole,
  waitFor,
  waitForReady,
  type RoleProcess,
} from './fixtures/dispatcher-processes.js';

let env: TestEnv;
let fx: Kysely<unknown>;
let saga: SagaClient;
let bundleDir: string;
const procs: RoleProcess[] = [];
const ROLE_ENV = { SAGA_FAST_PATH: 'true', RELAY_GRACE_MS: '500', FIXTURE_TOOL_TIMEOUT_MS: '1000' };

beforeAll(async () => {
  ({ env, fx } = await createFixtureTestEnv('bundled'));
  bundleDir = mkdtempSync(join(tmpdir(), 'bundled-roles-'));
  const files = await bundleRoles({
    tools: EFFECT_TOOLS,
    outDir: bundleDir,
    roles: ['api', 'relay', 'executor'],
    cwd: REPO_ROOT,
  });
  expect(files.map((f) => f.role)).toEqual(['api', 'relay', 'executor']);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  procs.push(startRole(env, 'api', { ...ROLE_ENV, PORT: String(port) }, { bundleDir }));
  procs.push(startRole(env, 'relay', ROLE_ENV, { bundleDir }));
  procs.push(startRole(env, 'executor', ROLE_ENV, { bundleDir }));
  saga = createSagaClient({
    baseUrl,
    token: await createApiToken(env.db, { tenantId: 'acme', role: 'agent' }),
  });
  await waitForReady(baseUrl, 55_000);
}, 120_000);
afterAll(async () => {
  await closeFixtureTestEnv(env, procs);
  if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
});

describe('roles started from their bundles', () => {
  it('start the bundle itself, not the role loaded file by file', () => {
    for (const role of ['api', 'relay', 'executor'] as const) {
      const args = procs.find((p) => p.role === role)!.child.spawnargs;
      expect(args.at(-1)).toBe(join(bundleDir, `${role}.mjs`));
    }
    // A role with no bundle there (none was made for the reconciler) starts as before.
    expect(nodeArgsFor(roleEntry('reconciler'), true, bundleDir).at(-1)).toMatch(/reconciler\.js$/);
  });

  it('take a call end to end, and tell a rejection (FAILED) from a timeout (UNKNOWN)', async () => {
    const { runId } = await saga.createRun({ runId: 'bundled-happy' });
    const done = await saga.call(runId, 'create_note', { orderId: 'b1', text: 'one' }, { stepIdx: 0 });
    expect(done).toMatchObject({ status: 'CONFIRMED', replayed: false });
    expect(await effectsFor(fx, stepKey(runId, 0, 'create_note'))).toHaveLength(1);

    await saga.createRun({ runId: 'bundled-reject' });
    await injectFault(fx, 'create_note', FaultKind.REJECT);
    const rejected = await saga.call(
      'bundled-reject',
      'create_note',
      { orderId: 'b2', text: 't' },
      { stepIdx: 0 },
    );
    expect(rejected).toMatchObject({ status: 'FAILED', stepIdx: 0 });

    await saga.createRun({ runId: 'bundled-504' });
    await injectFault(fx, 'create_note', FaultKind.ERROR_AFTER);
    const unknown = await saga
      .call('bundled-504', 'create_note', { orderId: 'b3', text: 't' }, { stepIdx: 0 })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ToolOutcomeUnknown);
    expect((await readStep(env.db, stepKey('bundled-504', 0, 'create_note')))?.status).toBe('UNKNOWN');
  });

  it('an executor bundle killed after the effect, before recording, leaves one effect, found by key', async () => {
    await procs.find((p) => p.role === 'executor')!.stop('SIGTERM');
    const crashing = startRole(
      env,
      'executor',
      { ...ROLE_ENV, SAGA_CRASH_POINTS: CrashPoint.AFTER_TOOL_BEFORE_RECORD },
      { bundleDir },
    );
    procs.push(crashing);
    const { runId } = await saga.createRun({ runId: 'bundled-crash' });
    const first = await saga.call(
      runId,
      'create_note',
      { orderId: 'b4', text: 'x' },
      { stepIdx: 0, waitMs: 3_000 },
    );
    expect(first.status).toBe('INTENDED');
    expect((await crashing.exited).signal).toBe('SIGKILL');
    const key = stepKey(runId, 0, 'create_note');
    const row = await readStep(env.db, key);
    await waitFor('lease expiry', () => ((row!.lease_until?.getTime() ?? 0) < Date.now() ? true : undefined));
    procs.push(startRole(env, 'executor', ROLE_ENV, { bundleDir }));
    const retry = await saga.call(runId, 'create_note', { orderId: 'b4', text: 'x again' }, { stepIdx: 0 });
    expect(retry).toMatchObject({ status: 'CONFIRMED', replayed: true, idempotencyKey: key });
    expect(await effectsFor(fx, key)).toHaveLength(1);
  });

  it('refuses to start with another SAGA_TOOLS than it was built with, naming the setting', async () => {
    const other = join(REPO_ROOT, 'test/fixtures/support-tools-short-timeouts.mjs');
    const wrong = startRole(env, 'executor', { ...ROLE_ENV, SAGA_TOOLS: other }, { bundleDir });
    procs.push(wrong);
    const exit = await wrong.exited;
    expect(exit.code).not.toBe(0);
    expect(wrong.output()).toContain(`SAGA_TOOLS: this role is a bundle built with ${EFFECT_TOOLS}`);
    expect(wrong.output()).toContain(`and SAGA_TOOLS names ${other}`);
  });
});
