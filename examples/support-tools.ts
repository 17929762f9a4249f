/**
 * A sample tool module (SAGA_TOOLS=examples/support-tools.ts): a tiny ticket system kept in a Postgres table
 * of the saga schema, so the example needs nothing but the harness's own Postgres.
 *
 * `create_ticket` labels each ticket with the harness's key, like a Jira label, and `lookup` searches by that
 * label. With EXAMPLE_FIRST_CALL_504=1 the first ticket is created and then answered with a 504, as a real
 * gateway might: the harness records UNKNOWN, and a retry finds the ticket by key instead of opening a second.
 */
import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import { createDb, defineTool, ref } from '@agent-saga/core';

let db: Kysely<unknown> | undefined;
function tickets(): Kysely<unknown> {
  db ??= createDb({
    url: process.env.DATABASE_URL ?? '',
    schema: process.env.SAGA_DB_SCHEMA ?? 'saga',
    poolSize: 4,
  }) as unknown as Kysely<unknown>;
  return db;
}

let gatewayFailures = process.env.EXAMPLE_FIRST_CALL_504 === '1' ? 1 : 0;

async function ensureTable(): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS example_tickets (
    id serial PRIMARY KEY, label text NOT NULL, summary text NOT NULL, order_id text NOT NULL,
    status text NOT NULL DEFAULT 'open', created_at timestamptz NOT NULL DEFAULT now())`.execute(tickets());
}

export const lookupOrder = defineTool({
  name: 'lookup_order',
  class: 'pure',
  version: 1,
  args: z.object({ orderId: z.string() }),
  execute: (args) =>
    Promise.resolve({ externalRef: null, result: { orderId: args.orderId, total: 4900, currency: 'eur' } }),
});

export const closeTicket = defineTool({
  name: 'close_ticket',
  class: 'irreversible',
  version: 1,
  args: z.object({ ticket: z.union([z.string(), z.object({ $ref: z.string() })]), reason: z.string() }),
  // Free text about the customer, in the arguments and echoed in the result.
  personal: ['reason'],
  personalResult: ['reason'],
  audience: ['support_team'],
  async execute(args) {
    await ensureTable();
    const id = typeof args.ticket === 'string' ? args.ticket : args.ticket.$ref;
    await sql`UPDATE example_tickets SET status = 'closed' WHERE 'SUP-' || id = ${id}`.execute(tickets());
    return { externalRef: id, result: { closed: id, reason: args.reason } };
  },
  lookup: () => Promise.resolve(null),
});

export const createTicket = defineTool({
  name: 'create_ticket',
  class: 'compensatable',
  version: 1,
  args: z.object({ summary: z.string().min(1), orderId: z.string().min(1) }),
  identity: ['orderId'],
  // The summary is free text about the customer's problem; the order id names nobody by itself.
  personal: ['summary'],
  audience: ['support_team'],
  compensate: (_args, key) => ({
    tool: 'close_ticket',
    args: { ticket: ref(key), reason: 'rolled back by run' },
  }),
  async execute(args, ctx) {
    await ensureTable();
    const r = await sql<{ id: number }>`
      INSERT INTO example_tickets (label, summary, order_id)
      VALUES (${`saga-${ctx.idempotencyKey}`}, ${args.summary}, ${args.orderId}) RETURNING id`.execute(
      tickets(),
    );
    const key = `SUP-${r.rows[0]!.id}`;
    if (gatewayFailures > 0) {
      gatewayFailures--;
      throw new Error('504 Gateway Timeout (the ticket was created anyway)');
    }
    return { externalRef: key, result: { key } };
  },
  async lookup(key) {
    await ensureTable();
    const r = await sql<{
      id: number;
    }>`SELECT id FROM example_tickets WHERE label = ${`saga-${key}`} ORDER BY id`.execute(tickets());
    const first = r.rows[0];
    return first ? { externalRef: `SUP-${first.id}`, result: { key: `SUP-${first.id}` } } : null;
  },
});

export const sendCustomerEmail = defineTool({
  name: 'send_customer_email',
  class: 'irreversible',
  version: 1,
  args: z.object({ to: z.string().email(), template: z.string() }),
  personal: ['to'],
  audience: ['customer'],
  execute: () => Promise.reject(new Error('the example never sends email')),
  lookup: () => Promise.resolve(null),
});

export default [lookupOrder, createTicket, closeTicket, sendCustomerEmail];
