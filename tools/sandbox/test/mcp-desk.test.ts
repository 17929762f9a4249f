import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpDesk, type RunningMcpDesk } from '../src/index.js';

/** Short, so the test waits it out; long enough that a search right after a write misses it. */
// Long enough that the three calls before the wait finish inside it on a loaded machine.
const LAG_MS = 1_000;
const KEY_META = 'agent-saga/idempotencyKey';

let desk: RunningMcpDesk;
let client: Client;

beforeAll(async () => {
  desk = await startMcpDesk({ lagMs: LAG_MS });
  client = new Client({ name: 'desk-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(desk.url)));
});
afterAll(async () => {
  await client?.close();
  await desk?.close();
});

const call = (name: string, args: Record<string, unknown>, key?: string) =>
  client.callTool({
    name,
    arguments: args,
    ...(key ? { _meta: { [KEY_META]: key } } : {}),
  }) as Promise<CallToolResult>;

describe('MCP desk stand-in', () => {
  it('lists its tools with annotations a gateway reads', async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual([
      'close_ticket',
      'delete_all_tickets',
      'find_ticket_by_key',
      'list_tickets',
      'open_ticket',
    ]);
    expect(byName.delete_all_tickets?.annotations?.destructiveHint).toBe(true);
    expect(byName.list_tickets?.annotations?.readOnlyHint).toBe(true);
    expect(byName.open_ticket?.inputSchema.required).toEqual(['subject', 'body']);
  });

  it('dedupes open_ticket by the key in _meta, and finds it by key only after the lag', async () => {
    const key = `k-${Date.now()}`;
    const first = await call('open_ticket', { subject: 'Broken tap', body: 'drips' }, key);
    const again = await call('open_ticket', { subject: 'Broken tap', body: 'drips' }, key);
    expect(again.structuredContent).toEqual(first.structuredContent);
    const id = (first.structuredContent as { id: string }).id;
    expect(
      desk
        .tickets()
        .filter((t) => t.openKey === key)
        .map((t) => t.id),
    ).toEqual([id]);
    expect((await call('find_ticket_by_key', { key })).structuredContent).toEqual({ tickets: [] });
    await new Promise((r) => setTimeout(r, LAG_MS + 20));
    const found = await call('find_ticket_by_key', { key });
    expect((found.structuredContent as { tickets: { id: string }[] }).tickets.map((t) => t.id)).toEqual([id]);
  });

  it('refuses to close an unknown ticket with isError, and closes a known one once', async () => {
    const refused = await call('close_ticket', { ticketId: 'T-9999' });
    expect(refused.isError).toBe(true);
    const opened = await call('open_ticket', { subject: 'Close me', body: '' });
    const id = (opened.structuredContent as { id: string }).id;
    const closed = await call('close_ticket', { ticketId: id, note: 'done' }, 'close-key');
    expect(closed.structuredContent).toMatchObject({ id, status: 'closed', note: 'done' });
    expect(desk.tickets().find((t) => t.id === id)).toMatchObject({
      status: 'closed',
      closeKey: 'close-key',
    });
  });

  it('reset_after commits the effect and loses the answer; error_after answers 500; drop does nothing', async () => {
    const before = desk.tickets().length;
    desk.failNext('reset_after');
    await expect(call('open_ticket', { subject: 'Lost answer', body: '' }, 'lost-1')).rejects.toThrow();
    expect(desk.tickets().filter((t) => t.openKey === 'lost-1')).toHaveLength(1);

    desk.failNext('error_after');
    await expect(call('open_ticket', { subject: 'Error after', body: '' }, 'err-1')).rejects.toMatchObject({
      code: 500,
    });
    expect(desk.tickets().filter((t) => t.openKey === 'err-1')).toHaveLength(1);

    desk.failNext('drop');
    await expect(call('open_ticket', { subject: 'Dropped', body: '' }, 'drop-1')).rejects.toThrow();
    expect(desk.tickets().filter((t) => t.openKey === 'drop-1')).toHaveLength(0);
    expect(desk.tickets()).toHaveLength(before + 2);

    // The faults were one-shot: the next call answers.
    const ok = await call('list_tickets', {});
    expect((ok.structuredContent as { tickets: unknown[] }).tickets).toHaveLength(before + 2);
  });
});
