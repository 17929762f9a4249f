/**
 * Correction sends that survive a crash (issue 9, item 4), over HTTP against the in-process API, with an
 * email tool whose "vendor" is a ledger in this file: it replays a same-key send (as Resend does), can be
 * held mid-call, and can lose its answer before or after accepting the message; its lookup finds an email
 * by its key at once (the lag only makes an early "not found" unbelievable). What a person checks: how many
 * emails went out, under which key, and the correction's status.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  bullmqConnection,
  correctionHash,
  createApiToken,
  createLogger,
  createToolRegistry,
  defineTool,
  OutcomeUnknownError,
  settleStaleCorrectionSends,
  ToolClass,
  type AnyTool,
  type CorrectionRow,
  type ToolRegistry,
  type ExecuteJob,
} from '@agent-saga/core';
import { createTestEnv, type TestEnv } from '@agent-saga/core/testing';
import type { Queue } from 'bullmq';
import { buildApi, type ApiApp } from '../src/api/build-api.js';
import { loadDispatcherConfig } from '../src/config.js';
import { createExecuteQueue } from '../src/queue/execute-queue.js';
import fixtureTools from '../../../test/fixtures/effect-tools.js';
import { createIntent } from '../../../test/fixtures/dispatcher-processes.js';

/**
 * Why 2 s: a lookup right after the send must be "too early" even on a loaded machine (300 ms was not, with
 * the load average at 20), and the test still waits it out twice in a few seconds.
 */
const LAG_MS = 2_000;
const RECHECK_MS = 50;

/** How the email vendor behaves on the next sends. */
type Mode = 'ok' | 'lost-before-accepting' | 'lost-after-accepting';

/** The email vendor: every accepted message, once per key (a same-key re-send is a replay). */
const vendor = {
  mode: 'ok' as Mode,
  /** Every call the tool received, by key: a second call under a key is a second send attempt. */
  calls: [] as string[],
  emails: [] as { id: string; key: string; vars: unknown }[],
  /** While set, a send waits for it: the call is in flight. */
  hold: null as Promise<void> | null,
};

const sendEmail = defineTool({
  name: 'send_email',
  class: ToolClass.IRREVERSIBLE,
  version: 1,
  args: z.object({ to: z.string(), template: z.string(), vars: z.record(z.string(), z.unknown()) }),
  timeoutMs: 2_000,
  lookupLagMs: LAG_MS,
  // This stand-in vendor dedupes a same-key re-send, as the real email API does, so a "not found" believed
  // before a held send lands cannot send twice: no horizon to wait out, only the lag (these tests are about
  // corrections; the horizon has tests of its own in core and the reconciler).
  commitHorizonMs: 0,
  async execute(args, ctx) {
    vendor.calls.push(ctx.idempotencyKey);
    if (vendor.hold) await vendor.hold;
    if (vendor.mode === 'lost-before-accepting') throw new OutcomeUnknownError('504 from the email vendor');
    let email = vendor.emails.find((e) => e.key === ctx.idempotencyKey);
    if (!email) {
      email = { id: `em_${vendor.emails.length + 1}`, key: ctx.idempotencyKey, vars: args.vars };
      vendor.emails.push(email);
    }
    if (vendor.mode === 'lost-after-accepting') throw new OutcomeUnknownError('connection reset');
    return { externalRef: email.id, result: { id: email.id } };
  },
  lookup: (key) => {
    const email = vendor.emails.find((e) => e.key === key);
    return Promise.resolve(email ? { externalRef: email.id, result: { id: email.id } } : null);
  },
}) as AnyTool;

let env: TestEnv;
let app: ApiApp;
let queue: Queue<ExecuteJob>;
let registry: ToolRegistry;
let op: string;
const log = createLogger({ level: 'silent', name: 'correction-sends-test' });

beforeAll(async () => {
  env = await createTestEnv('correction_sends');
  process.env.SAGA_DB_SCHEMA = env.schema;
  const config = loadDispatcherConfig({
    ...env.env,
    SAGA_TOOLS: 'test/fixtures/effect-tools.ts',
    SAGA_FAST_PATH: 'false',
    LOOKUP_RECHECK_MS: String(RECHECK_MS),
    LEASE_MARGIN_MS: '500',
    LOG_LEVEL: 'silent',
  });
  queue = createExecuteQueue(bullmqConnection(env.redisUrl), env.queuePrefix);
  registry = createToolRegistry([...(fixtureTools as AnyTool[]), sendEmail]);
  ({ app } = await buildApi({ db: env.db, schema: env.schema, registry, queue, config, logger: log }));
  await app.ready();
  op = await createApiToken(env.db, { tenantId: 't1', role: 'operator', label: 'alice' });
});
afterAll(async () => {
  await app?.close();
  await queue?.obliterate({ force: true }).catch(() => undefined);
  await queue?.close();
  await env?.close();
});
beforeEach(() => {
  vendor.mode = 'ok';
  vendor.calls = [];
  vendor.emails = [];
  vendor.hold = null;
});

async function post(url: string, body: Record<string, unknown>) {
  const res = await app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${op}` },
    payload: body,
  });
  return {
    status: res.statusCode,
    body: res.json<Record<string, unknown> & { error?: Record<string, unknown> }>(),
  };
}

/** A run whose step 0 is confirmed, with an open customer-facing correction for it. */
async function openCorrection(runId: string): Promise<CorrectionRow> {
  await createIntent(env, {
    runId,
    stepIdx: 0,
    tool: 'create_note',
    args: { orderId: `${runId}-o1`, text: 'refund' },
    tenantId: 't1',
    unrelayed: true,
  });
  await sql`UPDATE saga_log SET status = 'CONFIRMED' WHERE run_id = ${runId}`.execute(env.db);
  return env.db
    .insertInto('corrections')
    .values({
      run_id: runId,
      step_idx: 0,
      tenant_id: 't1',
      command: JSON.stringify({ template: 'email_sent_in_error', to: 'ada@example.com', vars: { v: 1 } }),
      audience: ['customer'],
      status: 'open',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

const read = (id: string) =>
  env.db.selectFrom('corrections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function waitForStatus(id: string, status: string): Promise<CorrectionRow> {
  for (let i = 0; i < 200; i++) {
    const c = await read(id);
    if (c.status === status) return c;
    await sleep(20);
  }
  throw new Error(`correction ${id} never became ${status}: ${(await read(id)).status}`);
}

describe('a correction send in flight', () => {
  it('refuses a dismiss, an edit and a second send with CORRECTION_SENDING; the email goes out once', async () => {
    const c = await openCorrection('cs-flight');
    const id = String(c.id);
    let release!: () => void;
    vendor.hold = new Promise((r) => (release = r));
    const sending = post(`/v1/corrections/${id}/send`, { hash: correctionHash(c.command) });
    const during = await waitForStatus(id, 'sending');
    expect(during.idempotency_key).toEqual(expect.any(String));
    expect(during.lease_owner).toEqual(expect.any(String));
    expect(during.lease_until!.getTime()).toBeGreaterThan(during.send_started_at!.getTime());

    const dismiss = await post(`/v1/corrections/${id}/dismiss`, { comment: 'no' });
    expect(dismiss.status).toBe(409);
    expect(dismiss.body.error).toMatchObject({ code: 'CORRECTION_SENDING', status: 'sending' });
    const edit = await post(`/v1/corrections/${id}/edit`, {
      hash: correctionHash(c.command),
      vars: { v: 2 },
    });
    expect(edit.status).toBe(409);
    expect(edit.body.error).toMatchObject({ code: 'CORRECTION_SENDING' });
    const twice = await post(`/v1/corrections/${id}/send`, { hash: correctionHash(c.command) });
    expect(twice.status).toBe(409);
    expect(twice.body.error).toMatchObject({ code: 'CORRECTION_SENDING' });
    expect((await read(id)).status).toBe('sending');

    release();
    const sent = await sending;
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ status: 'sent', decidedBy: 'alice', externalRef: 'em_1' });
    // The sending operator's token id beside its label, in the row and the view.
    const alice = await env.db
      .selectFrom('api_tokens')
      .select('id')
      .where('label', '=', 'alice')
      .executeTakeFirstOrThrow();
    expect(sent.body.decidedByTokenId).toBe(alice.id);
    expect(vendor.calls).toHaveLength(1);
    expect(vendor.emails).toEqual([{ id: 'em_1', key: during.idempotency_key, vars: { v: 1 } }]);
    const after = await read(id);
    expect(after).toMatchObject({
      status: 'sent',
      lease_owner: null,
      lease_until: null,
      decided_by_token: alice.id,
    });
    expect((await post(`/v1/corrections/${id}/dismiss`, {})).body.error).toMatchObject({
      code: 'APPROVAL_DECIDED',
    });
  });
});

describe('an unknown correction send', () => {
  it('is settled by the lookup before anything is sent again: found, it is sent with that evidence', async () => {
    const c = await openCorrection('cs-found');
    const id = String(c.id);
    vendor.mode = 'lost-after-accepting';
    const lost = await post(`/v1/corrections/${id}/send`, { hash: correctionHash(c.command) });
    expect(lost.status).toBe(502);
    expect(lost.body.error).toMatchObject({ code: 'CORRECTION_OUTCOME_UNKNOWN' });
    expect((await read(id)).status).toBe('unknown');

    vendor.mode = 'ok';
    const again = await post(`/v1/corrections/${id}/send`, { hash: correctionHash(c.command) });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'sent', externalRef: 'em_1' });
    expect(vendor.calls).toHaveLength(1); // settled by the lookup: never sent a second time
    expect(vendor.emails).toHaveLength(1);
    const events = await env.db
      .selectFrom('step_events')
      .select(['from_status', 'to_status', 'cause'])
      .where('run_id', '=', 'cs-found')
      .where('kind', '=', 'decision')
      .orderBy('id')
      .execute();
    expect(events.map((e) => [e.from_status, e.to_status])).toEqual([
      ['open', 'sending'],
      ['sending', 'unknown'],
      ['unknown', 'sent'],
    ]);
    expect(events.at(-1)!.cause).toContain('lookup');
  });

  it('refuses an edit until it settles not-found; back to open, the edit gets a new key', async () => {
    const c = await openCorrection('cs-edit');
    const id = String(c.id);
    vendor.mode = 'lost-before-accepting';
    const lost = await post(`/v1/corrections/${id}/send`, { hash: correctionHash(c.command) });
    expect(lost.status).toBe(502);
    const unknown = await read(id);
    expect(unknown.status).toBe('unknown');
    const firstKey = unknown.idempotency_key!;

    const edit = await post(`/v1/corrections/${id}/edit`, {
      hash: correctionHash(c.command),
      vars: { v: 2 },
    });
    expect(edit.status).toBe(409);
    expect(edit.body.error).toMatchObject({ code: 'CORRECTION_SENDING', status: 'unknown' });
    expect((await post(`/v1/corrections/${id}/dismiss`, {})).body.error).toMatchObject({
      code: 'CORRECTION_SENDING',
    });

    // Right after the send a "not found" proves nothing: the sweep leaves it unknown.
    const early = await settleStaleCorrectionSends(env.db, registry, { recheckMs: RECHECK_MS, log });
    expect(early).toContainEqual({ id, kind: 'too-early' });
    expect((await read(id)).status).toBe('unknown');
    // An operator's send meanwhile is refused the same way, saying from when absence is believed.
    const tooEarly = await post(`/v1/corrections/${id}/send`, { hash: correctionHash(c.command) });
    expect(tooEarly.status).toBe(409);
    expect(tooEarly.body.error).toMatchObject({ code: 'CORRECTION_SENDING' });
    expect(typeof tooEarly.body.error!.believableAt).toBe('string');

    await sleep(LAG_MS + 50);
    const settled = await settleStaleCorrectionSends(env.db, registry, { recheckMs: RECHECK_MS, log });
    expect(settled).toContainEqual({ id, kind: 'reopened' });
    expect((await read(id)).status).toBe('open');

    vendor.mode = 'ok';
    const edited = await post(`/v1/corrections/${id}/edit`, {
      hash: correctionHash(c.command),
      vars: { v: 2 },
    });
    expect(edited.status).toBe(200);
    const sent = await post(`/v1/corrections/${id}/send`, { hash: edited.body.hash });
    expect(sent.status).toBe(200);
    expect(sent.body.status).toBe('sent');
    const secondKey = sent.body.idempotencyKey as string;
    expect(secondKey).not.toBe(firstKey);
    // One email, of the edited message, under the new key; nothing ever went out under the first key.
    expect(vendor.emails).toEqual([{ id: 'em_1', key: secondKey, vars: { v: 2 } }]);
  });

  it('after a lookup proves it absent, a send of the same message reuses its key', async () => {
    const c = await openCorrection('cs-resend');
    const id = String(c.id);
    vendor.mode = 'lost-before-accepting';
    expect((await post(`/v1/corrections/${id}/send`, { hash: correctionHash(c.command) })).status).toBe(502);
    const firstKey = (await read(id)).idempotency_key;
    await sleep(LAG_MS + 50);
    vendor.mode = 'ok';
    // The operator's send settles it inline (absent, past the lag and a re-check) and sends the same key.
    const sent = await post(`/v1/corrections/${id}/send`, { hash: correctionHash(c.command) });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ status: 'sent', idempotencyKey: firstKey });
    expect(vendor.calls).toEqual([firstKey, firstKey]);
    expect(vendor.emails).toHaveLength(1);
  });

  it('a send whose sender died (lease run out) with the email accepted is settled sent by the sweep', async () => {
    const c = await openCorrection('cs-dead');
    const id = String(c.id);
    let release!: () => void;
    vendor.hold = new Promise((r) => (release = r));
    const sending = post(`/v1/corrections/${id}/send`, { hash: correctionHash(c.command) });
    const during = await waitForStatus(id, 'sending');
    // The sender "dies": its lease is run out by the database's clock while its call is still held.
    await sql`UPDATE corrections SET lease_until = now() - interval '1 second' WHERE id = ${id}`.execute(
      env.db,
    );
    vendor.emails.push({ id: 'em_1', key: during.idempotency_key!, vars: { v: 1 } });
    const swept = await settleStaleCorrectionSends(env.db, registry, { recheckMs: RECHECK_MS, log });
    expect(swept).toContainEqual({ id, kind: 'sent' });
    expect(await read(id)).toMatchObject({ status: 'sent', external_ref: 'em_1', lease_until: null });
    // The held call answering late changes nothing: still sent, still one email.
    release();
    expect((await sending).body).toMatchObject({ status: 'sent', externalRef: 'em_1' });
    expect(vendor.emails).toHaveLength(1);
  });
});
