/**
 * Issue 14, as an operator checks it against real role processes:
 * - a role's metrics listener answers on 127.0.0.1 and on no other interface by default;
 * - with METRICS_TOKEN, `/metrics` answers 401 without the bearer (and with a wrong one), 200 with it,
 *   while `/healthz` and `/readyz` stay open there and on the API's own port;
 * - an API started with SAGA_KEY_NAMESPACE writes keys derived under it (the step's and its
 *   compensation's), not the bare keys of an unnamespaced deployment, and logs only its fingerprint.
 *
 * One API (with a namespace and a metrics token) and one relay (defaults) serve the whole file.
 */
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compensationKey, createApiToken, stepKey } from '@agent-saga/core';
import type { TestEnv } from '@agent-saga/core/testing';
import { keyNamespaceFingerprint } from '@agent-saga/core';
import { closeFixtureTestEnv, createFixtureTestEnv } from './fixtures/fixture-test-env.js';
import { startRole, type RoleProcess } from './fixtures/dispatcher-processes.js';
import { agentApi, freePorts, waitForReadyz } from './fixtures/role-probes.js';

const NAMESPACE = 'staging-eu-7f3a';
const TOKEN = 'metrics-token-0123456789';

let env: TestEnv;
let procs: RoleProcess[] = [];
let ports: Record<'api' | 'apiMetrics' | 'relayMetrics', number>;
const local = (port: number, path: string) => `http://127.0.0.1:${port}${path}`;

beforeAll(async () => {
  ({ env } = await createFixtureTestEnv('metricsns'));
  ports = await freePorts(['api', 'apiMetrics', 'relayMetrics'] as const);
  procs = [
    startRole(env, 'api', {
      PORT: String(ports.api),
      METRICS_PORT: String(ports.apiMetrics),
      METRICS_TOKEN: TOKEN,
      SAGA_KEY_NAMESPACE: NAMESPACE,
    }),
    startRole(env, 'relay', { METRICS_PORT: String(ports.relayMetrics) }),
  ];
  await Promise.all([
    waitForReadyz(local(ports.api, ''), 200, 60_000),
    waitForReadyz(local(ports.apiMetrics, ''), 200, 60_000),
    waitForReadyz(local(ports.relayMetrics, ''), 200, 60_000),
  ]);
}, 90_000);
afterAll(() => closeFixtureTestEnv(env, procs));

/** The HTTP status of `url`, or `'refused'` when nothing listens there. */
async function statusOf(url: string, headers: Record<string, string> = {}): Promise<number | 'refused'> {
  try {
    return (await fetch(url, { headers, signal: AbortSignal.timeout(5_000) })).status;
  } catch {
    return 'refused';
  }
}

describe('the metrics listener', () => {
  it('answers on 127.0.0.1 only, by default', async () => {
    expect(await statusOf(local(ports.relayMetrics, '/metrics'))).toBe(200);
    const external = Object.values(networkInterfaces())
      .flat()
      .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal);
    expect(external, 'this host has a non-loopback IPv4 address to try').toBeDefined();
    expect(await statusOf(`http://${external!.address}:${ports.relayMetrics}/metrics`)).toBe('refused');
  });

  it('with METRICS_TOKEN, wants the bearer for /metrics and for nothing else', async () => {
    const metrics = local(ports.apiMetrics, '/metrics');
    expect(await statusOf(metrics)).toBe(401);
    expect(await statusOf(metrics, { authorization: `Bearer ${TOKEN}x` })).toBe(401);
    expect(await statusOf(metrics, { authorization: TOKEN })).toBe(401);
    const ok = await fetch(metrics, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    // The API's own registry, on the API role's metrics listener.
    expect(await ok.text()).toContain('saga_unknown_steps');
    expect(await statusOf(local(ports.apiMetrics, '/healthz'))).toBe(200);
    expect(await statusOf(local(ports.apiMetrics, '/readyz'))).toBe(200);
    const ready = (await (await fetch(local(ports.api, '/readyz'))).json()) as Record<string, unknown>;
    expect(ready).toMatchObject({ status: 'ready', checks: { database: { ok: true }, redis: { ok: true } } });
  });
});

describe('SAGA_KEY_NAMESPACE', () => {
  it('shapes the keys the API writes, and reaches its log only as a fingerprint', async () => {
    const api = agentApi(
      local(ports.api, ''),
      await createApiToken(env.db, { tenantId: 'acme', role: 'agent' }),
    );
    await api.createRun('ns-run');
    // No executor runs: the step stays INTENDED, which is all this needs (its key is fixed at intake).
    const answer = await api.call('ns-run', {
      tool: 'create_note',
      args: { orderId: 'ns-1', text: 'namespaced' },
      stepIdx: 0,
      waitMs: 0,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
    const row = await env.db
      .selectFrom('saga_log')
      .select(['idempotency_key', 'compensation'])
      .where('run_id', '=', 'ns-run')
      .where('step_idx', '=', 0)
      .executeTakeFirstOrThrow();
    expect(row.idempotency_key).toBe(stepKey('ns-run', 0, 'create_note', NAMESPACE));
    expect(row.idempotency_key).not.toBe(stepKey('ns-run', 0, 'create_note', null));
    expect(row.compensation?.key).toBe(compensationKey('ns-run', 0, 'create_note', NAMESPACE));
    expect(answer.body.idempotencyKey).toBe(row.idempotency_key);

    const out = procs[0]!.output();
    expect(out).toContain(`"keyNamespace":"${keyNamespaceFingerprint(NAMESPACE)}"`);
    expect(out).not.toContain(NAMESPACE);
    expect(procs[1]!.output()).toContain('"keyNamespace":"none"');
  });
});
