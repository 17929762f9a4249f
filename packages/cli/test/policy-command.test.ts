import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSagaClient } from '@agent-saga/client';
import { startRealDispatcher, type RealDispatcher } from '../../client/test/real-dispatcher.js';
import { runCliInProcess } from './run-cli-in-process.js';

/**
 * `agent-saga policy show|set` against the real dispatcher API (real Postgres, real tokens): the operator
 * sets the tenant's floor with flags or a file, a stale version and an agent token are refused, and a run
 * the agent then creates asking for less gets the floor.
 */
let d: RealDispatcher;
let dir: string;
beforeAll(async () => {
  d = await startRealDispatcher('cli_policy');
  dir = mkdtempSync(join(tmpdir(), 'agent-saga-policy-'));
});
afterAll(async () => d?.close());

async function cli(args: string[], token = d.operatorToken) {
  const run = await runCliInProcess(args, { AGENT_SAGA_URL: d.url, AGENT_SAGA_TOKEN: token });
  for (const t of [d.operatorToken, d.agentToken]) expect(run.stdout + run.stderr).not.toContain(t);
  return run;
}
const json = (run: { stdout: string }) => JSON.parse(run.stdout) as Record<string, unknown>;

describe('agent-saga policy', () => {
  it('shows no floor, then sets one from flags; show prints it with who set it', async () => {
    expect(json(await cli(['policy', 'show', '--json']))).toMatchObject({
      version: 0,
      policy: {},
      budget: {},
    });
    const set = await cli([
      'policy',
      'set',
      '--require-pivot',
      '--approve-money-above',
      'USD=50000',
      '--approve-money-above',
      'eur=100',
      '--authority-ttl',
      '1h',
      '--deadline',
      '4h',
      '--if-version',
      '0',
      '--json',
    ]);
    expect(set.code).toBe(0);
    expect(json(set)).toMatchObject({
      version: 1,
      policy: { requirePivot: true, approveMoneyAbove: { usd: 50_000, eur: 100 }, authorityTtlMs: 3_600_000 },
      budget: { deadlineMs: 14_400_000 },
      updatedBy: 'alice',
    });
    const show = await cli(['policy', 'show']);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/version\s+1/);
    expect(show.stdout).toMatch(/policy\.requirePivot\s+true/);
    expect(show.stdout).toMatch(/policy\.approveMoneyAbove\s+eur=100 usd=50000/);
    expect(show.stdout).toMatch(/budget\.deadlineMs\s+14400000/);
    expect(show.stdout).toMatch(/updated by\s+alice \(tok_/);
  });

  it('gives a run asking for less the floor', async () => {
    const agent = createSagaClient({ baseUrl: d.url, token: d.agentToken });
    await agent.createRun({
      runId: 'cli-floored',
      policy: { requirePivot: false, approveMoneyAbove: { USD: 9e6 } },
    });
    const run = await agent.getRun('cli-floored');
    expect(run.policy).toMatchObject({ requirePivot: true, approveMoneyAbove: { usd: 50_000, eur: 100 } });
    expect(run.budget.deadline).toBeDefined();
  });

  it('refuses a stale --if-version (exit 1, the code printed) and an agent token (FORBIDDEN)', async () => {
    const stale = await cli(['policy', 'set', '--max-steps', '5', '--if-version', '0']);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('POLICY_VERSION_MISMATCH (HTTP 409)');
    const agent = await cli(['policy', 'set', '--max-steps', '5'], d.agentToken);
    expect(agent.code).toBe(1);
    expect(agent.stderr).toContain('FORBIDDEN (HTTP 403)');
    expect(json(await cli(['policy', 'show', '--json']))).toMatchObject({
      version: 1,
      budget: { deadlineMs: 14_400_000 },
    });
  });

  it('takes the floor from --file, naming a bad field before anything is sent (exit 2)', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ policy: { approveMoneyAbove: { USD: -1 } } }));
    const refused = await cli(['policy', 'set', '--file', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--file: policy.approveMoneyAbove.USD:');

    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ policy: { approveDeletions: true }, budget: { maxSteps: 20 } }));
    const set = await cli(['policy', 'set', '--file', good, '--if-version', '1', '--json']);
    expect(set.code).toBe(0);
    expect(json(set)).toMatchObject({
      version: 2,
      policy: { approveDeletions: true },
      budget: { maxSteps: 20 },
    });
    expect((json(set).policy as Record<string, unknown>).requirePivot).toBeUndefined();
  });

  it('refuses a set with nothing to set, and a malformed limit (exit 2)', async () => {
    const empty = await cli(['policy', 'set']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('name at least one flag');
    const malformed = await cli(['policy', 'set', '--approve-money-above', '50000']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('USD=50000');
    expect(json(await cli(['policy', 'show', '--json']))).toMatchObject({ version: 2 });
  });
});
