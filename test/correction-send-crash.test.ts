/**
 * A correction's email accepted by the vendor and the api killed before it recorded the send (a real child
 * process, SIGKILLed at the named crash point `after-correction-send-before-record`), against the vendor
 * sandbox: the correction stays `sending` until its lease runs out by the database's clock, then the
 * reconciler's sweep settles it `sent` by the email lookup by its key (the `saga_key` tag), and nothing is
 * ever sent twice. What a person checks: the sandbox's ledger and the correction as the API shows it.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { correctionHash, createApiToken, CrashPoint, freePort } from '@agent-saga/core';
import { createIntent, waitFor } from './fixtures/dispatcher-processes.js';
import { startSupportHarness, type SupportHarness } from './fixtures/support-harness.js';

let h: SupportHarness;
let operator: string;
beforeAll(async () => {
  h = await startSupportHarness('correction_crash', ['reconciler']);
  operator = await createApiToken(h.env.db, { tenantId: 'acme', role: 'operator', label: 'olga' });
}, 90_000);
afterAll(async () => h?.close());

const TO = 'ada@example.com';

async function api(baseUrl: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('a correction send killed between the vendor and the record', () => {
  it('is settled sent by the lookup by key after the lease, never sent twice', async () => {
    // A run with a confirmed step and an open customer-facing correction for it (as the compensator queues).
    await createIntent(h.env, {
      runId: 'corr-crash',
      stepIdx: 0,
      tool: 'create_note',
      args: { orderId: 'o1', text: 'x' },
      unrelayed: true,
    });
    await sql`UPDATE saga_log SET status = 'CONFIRMED' WHERE run_id = 'corr-crash'`.execute(h.env.db);
    const command = {
      template: 'email_sent_in_error',
      to: TO,
      vars: { originalTemplate: 'refund_confirmation' },
    };
    const c = await h.env.db
      .insertInto('corrections')
      .values({
        run_id: 'corr-crash',
        step_idx: 0,
        tenant_id: 'acme',
        command: JSON.stringify(command),
        audience: ['customer'],
        status: 'open',
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const id = String(c.id);

    // A second api, which kills itself once the email tool has returned and before the send is recorded.
    const port = await freePort();
    const crashing = h.start('api', {
      PORT: String(port),
      SAGA_CRASH_POINTS: CrashPoint.AFTER_CORRECTION_SEND_BEFORE_RECORD,
    });
    const crashingUrl = `http://127.0.0.1:${port}`;
    await waitFor(
      'crashing api ready',
      () =>
        fetch(`${crashingUrl}/readyz`).then(
          (r) => (r.ok ? true : undefined),
          () => undefined,
        ),
      55_000,
      100,
    );
    const emailsBefore = h.sandbox.admin.ledger().email.emails.length;
    const killed = await api(crashingUrl, 'POST', `/v1/corrections/${id}/send`, {
      hash: correctionHash(command),
    }).catch((err: unknown) => err);
    expect(killed).toBeInstanceOf(Error); // no answer: the process died mid-request
    expect((await crashing.exited).signal).toBe('SIGKILL');
    expect(crashing.output()).toContain(
      `crash point reached: ${CrashPoint.AFTER_CORRECTION_SEND_BEFORE_RECORD}`,
    );

    // The vendor has the email; the log still says `sending`, under the key the email carries.
    const emails = h.sandbox.admin.ledger().email.emails;
    expect(emails).toHaveLength(emailsBefore + 1);
    const mid = await h.env.db
      .selectFrom('corrections')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(mid.status).toBe('sending');
    expect(emails.at(-1)!.idempotencyKey).toBe(mid.idempotency_key);

    // Meanwhile nobody may change it or send it again (the lease is live).
    const dismiss = await api(h.baseUrl, 'POST', `/v1/corrections/${id}/dismiss`, {});
    expect(dismiss.status).toBe(409);
    expect(dismiss.body.error).toMatchObject({ code: 'CORRECTION_SENDING' });

    // Past the lease, the reconciler's sweep settles it by the lookup: sent, with the vendor's email id.
    const settled = await waitFor(
      'correction settled by the sweep',
      async () => {
        const r = await api(h.baseUrl, 'GET', '/v1/corrections?runId=corr-crash&status=sent');
        return (r.body.corrections as { id: string; externalRef: string; status: string }[]).find(
          (x) => x.id === id,
        );
      },
      20_000,
      100,
    );
    expect(settled.externalRef).toBe(emails.at(-1)!.id);
    const again = await api(h.baseUrl, 'POST', `/v1/corrections/${id}/send`, {
      hash: correctionHash(command),
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'APPROVAL_DECIDED' });
    const after = h.sandbox.admin.ledger().email.emails;
    expect(after).toHaveLength(emailsBefore + 1);
    expect(after.filter((e) => e.idempotencyKey === mid.idempotency_key)).toHaveLength(1);
    const causes = await h.env.db
      .selectFrom('step_events')
      .select(['to_status', 'cause'])
      .where('run_id', '=', 'corr-crash')
      .where('kind', '=', 'decision')
      .orderBy('id')
      .execute();
    expect(causes.map((e) => e.to_status)).toEqual(['sending', 'unknown', 'sent']);
    expect(causes[1]!.cause).toContain('lease ran out');
  }, 90_000);
});
