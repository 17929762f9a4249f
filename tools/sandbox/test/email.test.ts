import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../src/index.js';
import { call } from './http-client.js';

let sandbox: RunningSandbox;
let auth: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox();
  auth = { authorization: `Bearer ${sandbox.credentials.emailApiKey}` };
});
afterAll(async () => sandbox.close());
beforeEach(() => sandbox.admin.reset());

const message = (subject = 'Your refund') => ({
  from: 'Support <support@example.com>',
  to: ['ada@example.com'],
  subject,
  text: 'We refunded order #1182.',
  tags: [{ name: 'saga_key', value: 'run1-2' }],
});

const send = (key: string | undefined, body: unknown) =>
  call(`${sandbox.urls.email}/emails`, {
    json: body,
    headers: { ...auth, ...(key === undefined ? {} : { 'idempotency-key': key }) },
  });

describe('email (Resend-compatible) sandbox', () => {
  it('sends with an Idempotency-Key, replays the same body, refuses another body with 409', async () => {
    const first = await send('run1-2', message());
    expect(first.status).toBe(200);
    const { id } = first.body as { id: string };
    const again = await send('run1-2', message());
    expect(again.body).toEqual({ id });
    const other = await send('run1-2', message('Another subject'));
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ statusCode: 409, name: 'invalid_idempotent_request' });
    const emails = sandbox.admin.ledger().email.emails;
    expect(emails).toHaveLength(1);
    expect(emails[0]).toMatchObject({
      id,
      idempotencyKey: 'run1-2',
      tags: [{ name: 'saga_key', value: 'run1-2' }],
    });
  });

  it('answers 409 concurrent_idempotent_requests while the first is in flight', async () => {
    sandbox.admin.addFault({
      vendor: 'email',
      method: 'POST',
      path: '/emails',
      nth: 1,
      kind: 'delay',
      delayMs: 300,
      phase: 'during_processing',
    });
    const first = send('k-inflight', message());
    await new Promise((r) => setTimeout(r, 80));
    const second = await send('k-inflight', message());
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ name: 'concurrent_idempotent_requests' });
    expect((await first).status).toBe(200);
    expect(sandbox.admin.ledger().email.emails).toHaveLength(1);
  });

  it('lists newest first without tags; the tags are on the single email', async () => {
    const a = (await send(undefined, message('a'))).body as { id: string };
    const b = (await send(undefined, message('b'))).body as { id: string };
    const list = (await call(`${sandbox.urls.email}/emails?limit=1`, { headers: auth })).body as {
      object: string;
      has_more: boolean;
      data: Record<string, unknown>[];
    };
    expect(list.object).toBe('list');
    expect(list.has_more).toBe(true);
    expect(list.data.map((e) => e.id)).toEqual([b.id]);
    expect(list.data[0]).not.toHaveProperty('tags');
    const one = (await call(`${sandbox.urls.email}/emails/${a.id}`, { headers: auth })).body as {
      object: string;
      tags: unknown;
    };
    expect(one.object).toBe('email');
    expect(one.tags).toEqual([{ name: 'saga_key', value: 'run1-2' }]);
  });

  it('validates like Resend: missing fields, bad tags, bad key', async () => {
    const noTo = await send(undefined, { ...message(), to: undefined });
    expect(noTo.body).toMatchObject({ statusCode: 422, name: 'missing_required_field' });
    const badTag = await send('k-bad', { ...message(), tags: [{ name: 'saga_key', value: 'run:1' }] });
    expect(badTag.status).toBe(422);
    const retry = await send('k-bad', message());
    expect(retry.status).toBe(200);
    const noKey = await call(`${sandbox.urls.email}/emails`, { json: message() });
    expect(noKey.body).toMatchObject({ statusCode: 401, name: 'missing_api_key' });
    const wrongKey = await call(`${sandbox.urls.email}/emails`, {
      json: message(),
      headers: { authorization: 'Bearer re_wrong' },
    });
    expect(wrongKey.body).toMatchObject({ statusCode: 403, name: 'invalid_api_key' });
  });
});
