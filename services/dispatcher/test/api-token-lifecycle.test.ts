/**
 * A token's life as an operator manages it (`agent-saga tokens …` calls these core functions): created with
 * an expiry and a label unique in its tenant, listed without its secret, revoked or rotated, and refused
 * `401` within a second by an API that had it cached (the cache lives 500 ms; every instance has its own).
 * And least privilege: the review queues are for operators only; an agent reads its run's approvals in
 * the run view.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  issueApiToken,
  listApiTokens,
  revokeApiToken,
  rotateApiToken,
  TokenRole,
  type SagaDb,
} from '@agent-saga/core';
import { startBoundRunsHarness, type BoundRunsHarness } from './bound-runs-harness.js';

let h: BoundRunsHarness;
let second: BoundRunsHarness;
let db: SagaDb;
beforeAll(async () => {
  h = await startBoundRunsHarness('api_token_lifecycle');
  second = await startBoundRunsHarness('api_token_lifecycle_second');
  db = h.env.db;
}, 60_000);
afterAll(async () => {
  await second?.close();
  await h?.close();
});

const status = async (token: string, at: BoundRunsHarness = h) =>
  (await at.request('GET', '/v1/runs', undefined, token)).status;

/** Polls until `probe` holds; how long it took, in ms. */
async function within(ms: number, probe: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (!(await probe())) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return Date.now() - start;
}

describe('token lifecycle', () => {
  it('a revoked token answers 401 within a second on every API that had it cached', async () => {
    const { id, token } = await issueApiToken(db, { tenantId: 't1', role: TokenRole.AGENT, label: 'bot-a' });
    expect(await status(token)).toBe(200);
    expect(await status(token)).toBe(200); // cached now
    await revokeApiToken(db, id);
    const took = await within(1_000, async () => (await status(token)) === 401);
    expect(took).toBeLessThan(1_000);
    const listed = (await listApiTokens(db, { tenantId: 't1' })).find((t) => t.id === id);
    expect(listed).toMatchObject({ id, tenantId: 't1', role: 'agent', label: 'bot-a' });
    expect(listed?.revokedAt).toBeInstanceOf(Date);
    expect(JSON.stringify(listed)).not.toContain(token);
  });

  it('revocation reaches another API instance, with its own cache, within a second', async () => {
    const { id, token } = await issueApiToken(second.env.db, { tenantId: 't1', role: TokenRole.AGENT });
    expect(await status(token, second)).toBe(200);
    await revokeApiToken(second.env.db, id);
    await within(1_000, async () => (await status(token, second)) === 401);
  });

  it('an expired token is refused by the database clock, without a revoke', async () => {
    const { token, expiresAt } = await issueApiToken(db, {
      tenantId: 't1',
      role: TokenRole.AGENT,
      expiresInMs: 600,
    });
    expect(expiresAt).toBeInstanceOf(Date);
    expect(await status(token)).toBe(200);
    await within(1_500, async () => (await status(token)) === 401);
  });

  it('a rotated token keeps its id and label; the old secret stops, the new one works', async () => {
    const issued = await issueApiToken(db, { tenantId: 't1', role: TokenRole.OPERATOR, label: 'carol' });
    expect(await status(issued.token)).toBe(200);
    const rotated = await rotateApiToken(db, issued.id);
    expect(rotated.id).toBe(issued.id);
    expect(rotated.token).not.toBe(issued.token);
    expect(await status(rotated.token)).toBe(200);
    await within(1_000, async () => (await status(issued.token)) === 401);
    const listed = (await listApiTokens(db, { tenantId: 't1' })).find((t) => t.id === issued.id);
    expect(listed).toMatchObject({ label: 'carol', revokedAt: null });
    expect(listed?.rotatedAt).toBeInstanceOf(Date);
  });

  it('a label is unique in its tenant, named in the refusal, and free in another tenant', async () => {
    await issueApiToken(db, { tenantId: 't1', role: TokenRole.OPERATOR, label: 'dave' });
    await expect(
      issueApiToken(db, { tenantId: 't1', role: TokenRole.AGENT, label: 'dave' }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST', field: 'label' });
    await expect(
      issueApiToken(db, { tenantId: 't2', role: TokenRole.AGENT, label: 'dave' }),
    ).resolves.toMatchObject({ id: expect.stringMatching(/^tok_/) as string });
  });
});

describe('least privilege', () => {
  it.each(['/v1/approvals', '/v1/cases', '/v1/corrections'])(
    '%s is for operators: an agent token gets 403 FORBIDDEN',
    async (route) => {
      const agent = await h.request('GET', route, undefined, h.token.agent);
      expect(agent.status).toBe(403);
      expect(agent.body.error).toMatchObject({ code: 'FORBIDDEN' });
      expect((await h.request('GET', route, undefined, h.token.operator)).status).toBe(200);
    },
  );

  it("an agent still reads its own run's held approvals through the run view", async () => {
    const created = await h.request('POST', '/v1/runs', {});
    const runId = created.body.runId as string;
    const held = await h.request('POST', `/v1/runs/${runId}/calls`, {
      tool: 'send_email',
      args: { to: 'ada@example.com', template: 'refund_confirmation', vars: { orderId: '1' } },
      stepIdx: 0,
      waitMs: 0,
    });
    expect(held.body.status).toBe('AWAITING_APPROVAL');
    const view = await h.request('GET', `/v1/runs/${runId}`);
    expect(view.body.approvals).toEqual([
      expect.objectContaining({ kind: 'step', status: 'pending' }) as unknown,
    ]);
  });
});
