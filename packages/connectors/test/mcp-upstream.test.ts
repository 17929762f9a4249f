import { writeFileSync } from 'node:fs';
import {
  absenceEvidenceAfterMs,
  ClientError,
  commitHorizonOf,
  createToolRegistry,
  describeTool,
  OutcomeUnknownError,
  parseArgs,
  ref,
  type AnyTool,
} from '@agent-saga/core';
import { startMcpDesk, type RunningMcpDesk } from '@agent-saga/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deskMapping, writeDeskMapping } from '../../../test/fixtures/mcp-desk-mapping.js';
import {
  checkUpstreamTools,
  createMcpUpstreamTools,
  loadMcpUpstreamMapping,
  McpUpstreamMappingError,
  McpUpstreamUnavailableError,
  parseMcpUpstreamMapping,
  UnmappedUpstreamToolError,
} from '../src/index.js';
import { eventually, rejectionOf, stepContext, toolNamed } from './support/http-connector-kit.js';
import { effectOf } from './support/effect-of.js';

/**
 * The desk's search lag, and what the lookups are told: long enough that a lookup right after the write
 * misses even on a loaded machine, short enough that the tests wait it out.
 */
const LAG_MS = 1_000;

let desk: RunningMcpDesk;
let tools: readonly AnyTool[];
let mappingPath: string;
const stop = new AbortController();

beforeAll(async () => {
  desk = await startMcpDesk({ lagMs: LAG_MS });
  mappingPath = writeDeskMapping(desk.url, { lagMs: LAG_MS });
  tools = await createMcpUpstreamTools(loadMcpUpstreamMapping(mappingPath), { signal: stop.signal });
});
afterAll(async () => {
  stop.abort();
  await desk?.close();
});

const tool = (name: string) => toolNamed(tools, name);
const mappingError = (json: unknown) => {
  try {
    parseMcpUpstreamMapping(json, 'upstreams.json');
  } catch (err) {
    expect(err).toBeInstanceOf(McpUpstreamMappingError);
    return (err as Error).message;
  }
  throw new Error('expected the mapping to be refused');
};

describe('the mapping file', () => {
  it('names the file and the field path of every error', () => {
    const base = deskMapping('http://127.0.0.1:1/mcp') as {
      upstreams: { desk: Record<string, unknown> };
      tools: Record<string, Record<string, unknown>>;
    };
    const without = (name: string, field: string) => {
      const copy = structuredClone(base);
      const entry = copy.tools[name] as Record<string, unknown>;
      delete entry[field];
      return copy;
    };
    expect(mappingError(without('desk_open_ticket', 'class'))).toBe(
      'upstreams.json: tools.desk_open_ticket.class: Required',
    );
    expect(mappingError(without('desk_open_ticket', 'lookup'))).toContain(
      'tools.desk_open_ticket.lookup: Required',
    );
    expect(mappingError(without('desk_open_ticket', 'compensation'))).toContain(
      'tools.desk_open_ticket.compensation: Required (a compensatable tool)',
    );
    const noLookupTool = structuredClone(base);
    delete (noLookupTool.tools.desk_open_ticket?.lookup as Record<string, unknown>).tool;
    expect(mappingError(noLookupTool)).toBe('upstreams.json: tools.desk_open_ticket.lookup.tool: Required');
    const badComp = structuredClone(base);
    (badComp.tools.desk_open_ticket?.compensation as Record<string, unknown>).tool = 'desk_reopen';
    expect(mappingError(badComp)).toContain(
      'tools.desk_open_ticket.compensation.tool: desk_reopen is not a mapped tool',
    );
    const noKey = structuredClone(base);
    noKey.upstreams.desk.acceptsKeyInMeta = false;
    expect(mappingError(noKey)).toContain('tools.desk_open_ticket.keyArg: Required');
    expect(mappingError({ ...base, tools: { 'Bad-Name': base.tools.desk_list_tickets } })).toContain(
      'tools.Bad-Name: must match',
    );
    const badHorizon = structuredClone(base);
    (badHorizon.tools.desk_open_ticket as Record<string, unknown>).commitHorizonMs = -1;
    expect(mappingError(badHorizon)).toContain('tools.desk_open_ticket.commitHorizonMs');
    writeFileSync(`${mappingPath}.broken`, '{ not json');
    expect(() => loadMcpUpstreamMapping(`${mappingPath}.broken`)).toThrow(
      `${mappingPath}.broken: (file): cannot be read as JSON`,
    );
  });
});

describe('upstream MCP tools against the desk', () => {
  it('registers with core, with the upstream schema, and refuses bad args', () => {
    const registry = createToolRegistry(tools);
    expect(registry.list().map((t) => t.name)).toEqual([
      'desk_open_ticket',
      'desk_close_ticket',
      'desk_list_tickets',
    ]);
    const open = tool('desk_open_ticket');
    expect(open.description).toBe('Opens a help-desk ticket.');
    expect(open.lookupLagMs).toBe(LAG_MS);
    const described = describeTool(open) as { inputSchema: { required?: string[]; properties?: object } };
    expect(described.inputSchema.required).toEqual(['subject', 'body']);
    expect(Object.keys(described.inputSchema.properties ?? {})).toEqual(['subject', 'body']);
    expect(parseArgs(open, { subject: 'Broken tap', body: 'drips' })).toEqual({
      subject: 'Broken tap',
      body: 'drips',
    });
    expect(() => parseArgs(open, { subject: 'Broken tap' })).toThrow(/args\.body/);
    expect(() => parseArgs(open, { subject: '', body: 'x' })).toThrow(/args\.subject/);
    expect(() => parseArgs(tool('desk_close_ticket'), { ticketId: 'nope' })).toThrow(/args\.ticketId/);
  });

  it('sends the key in _meta: a second execute with the same key makes no second ticket', async () => {
    const ctx = stepContext('desk_open_ticket');
    const args = parseArgs(tool('desk_open_ticket'), { subject: 'Dedupe me', body: 'once' });
    const first = await tool('desk_open_ticket').execute(args, ctx);
    const second = await tool('desk_open_ticket').execute(args, ctx);
    expect(first.externalRef).toMatch(/^T-\d+$/);
    expect(second).toEqual(first);
    expect(desk.tickets().filter((t) => t.subject === 'Dedupe me')).toEqual([
      expect.objectContaining({ id: first.externalRef, openKey: ctx.idempotencyKey }),
    ]);
  });

  it('a lost answer is an unknown outcome, and the lookup finds the ticket after the lag', async () => {
    const ctx = stepContext('desk_open_ticket');
    const args = parseArgs(tool('desk_open_ticket'), { subject: 'Lost answer', body: 'reset' });
    desk.failNext('reset_after');
    const err = await rejectionOf(tool('desk_open_ticket').execute(args, ctx));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err).not.toBeInstanceOf(ClientError);
    const made = desk.tickets().filter((t) => t.openKey === ctx.idempotencyKey);
    expect(made).toHaveLength(1);
    // Right after the write the search has not caught up: absent is not believed before the lag.
    expect(await tool('desk_open_ticket').lookup?.(ctx.idempotencyKey, ctx)).toBeNull();
    const found = await eventually(
      async () => (await tool('desk_open_ticket').lookup?.(ctx.idempotencyKey, ctx)) ?? null,
      LAG_MS * 5,
      50,
    );
    expect(found).toMatchObject({ externalRef: made[0]?.id, result: { subject: 'Lost answer' } });
    // The connection was dropped and reopened: the next call answers.
    desk.failNext('error_after');
    expect(
      await rejectionOf(tool('desk_open_ticket').execute(args, stepContext('desk_open_ticket'))),
    ).toMatchObject({ code: 'OUTCOME_UNKNOWN', status: 500 });
    const again = await tool('desk_list_tickets').execute({}, stepContext('desk_list_tickets'));
    expect((again.result as { tickets: unknown[] }).tickets.length).toBe(desk.tickets().length);
  });

  it('a tool refusal (isError) is a ClientError; a dropped request is unknown and does nothing', async () => {
    const close = tool('desk_close_ticket');
    const refused = await rejectionOf(
      close.execute({ ticketId: 'T-9999' }, stepContext('desk_close_ticket')),
    );
    expect(refused).toBeInstanceOf(ClientError);
    expect((refused as Error).message).toContain('no ticket T-9999');
    const before = desk.tickets().length;
    desk.failNext('drop');
    const dropped = await rejectionOf(
      tool('desk_open_ticket').execute({ subject: 'Dropped', body: '' }, stepContext('desk_open_ticket')),
    );
    expect(dropped).toBeInstanceOf(OutcomeUnknownError);
    expect(desk.tickets()).toHaveLength(before);
  });

  it('compensate stores desk_close_ticket with ref(key), before the call', () => {
    expect(tool('desk_open_ticket').compensate?.({ subject: 's', body: 'b' }, 'key-1')).toEqual({
      tool: 'desk_close_ticket',
      args: { ticketId: ref('key-1'), note: 'rolled back by run' },
    });
    expect(tool('desk_open_ticket').compensationTool).toBe('desk_close_ticket');
  });

  it('finds a close by its own key, and reports duplicates of one key', async () => {
    const opened = await tool('desk_open_ticket').execute(
      { subject: 'To close', body: '' },
      stepContext('desk_open_ticket'),
    );
    const ctx = stepContext('desk_close_ticket');
    await tool('desk_close_ticket').execute({ ticketId: opened.externalRef }, ctx);
    const found = await eventually(
      async () => effectOf(await tool('desk_close_ticket').lookup?.(ctx.idempotencyKey, ctx)),
      LAG_MS * 5,
      50,
    );
    expect(found).toMatchObject({ externalRef: opened.externalRef, result: { status: 'closed' } });
    expect(found?.duplicates).toBeUndefined();
    // A second effect under the same key (a ticket opened with the close's key): a duplicate incident.
    const other = await tool('desk_open_ticket').execute({ subject: 'Same key', body: '' }, ctx);
    const both = await eventually(
      async () => {
        const seen = effectOf(await tool('desk_close_ticket').lookup?.(ctx.idempotencyKey, ctx));
        return seen?.duplicates ? seen : null;
      },
      LAG_MS * 5,
      50,
    );
    expect([...(both?.duplicates ?? [])].sort()).toEqual([opened.externalRef, other.externalRef].sort());
  });
});

describe('checkUpstreamTools (the gateway start check)', () => {
  it('refuses the unmapped destructive tool, naming it', async () => {
    const err = await rejectionOf(checkUpstreamTools(loadMcpUpstreamMapping(mappingPath)));
    expect(err).toBeInstanceOf(UnmappedUpstreamToolError);
    expect(err).toMatchObject({ upstream: 'desk', tool: 'delete_all_tickets' });
    expect((err as Error).message).toBe(
      `upstream tool desk.delete_all_tickets has no mapping in ${mappingPath}: map it with a class (annotations may suggest, never decide)`,
    );
  });

  it('exposes the mapped tools and hides read-only and lookup tools once the destructive one is mapped', async () => {
    const path = writeDeskMapping(desk.url, {
      lagMs: LAG_MS,
      tools: {
        desk_list_tickets: undefined,
        desk_delete_all: {
          upstream: 'desk',
          tool: 'delete_all_tickets',
          class: 'irreversible',
          version: 1,
          lookup: { tool: 'list_tickets', keyArg: 'key' },
        },
      },
    });
    const check = await checkUpstreamTools(loadMcpUpstreamMapping(path));
    expect(check.exposed).toEqual(['desk_open_ticket', 'desk_close_ticket', 'desk_delete_all']);
    expect(check.hidden).toEqual([
      {
        upstream: 'desk',
        tool: 'find_ticket_by_key',
        reason: 'lookup of desk_open_ticket, desk_close_ticket',
      },
      { upstream: 'desk', tool: 'list_tickets', reason: 'lookup of desk_delete_all' },
    ]);
    const unmappedReadOnly = writeDeskMapping(desk.url, {
      tools: {
        desk_list_tickets: undefined,
        desk_delete_all: {
          upstream: 'desk',
          tool: 'delete_all_tickets',
          class: 'irreversible',
          version: 1,
          lookup: { tool: 'find_ticket_by_key', keyArg: 'key' },
        },
      },
    });
    const second = await checkUpstreamTools(loadMcpUpstreamMapping(unmappedReadOnly));
    expect(second.hidden).toContainEqual({
      upstream: 'desk',
      tool: 'list_tickets',
      reason: 'unmapped (annotated read-only)',
    });
  });

  it('declares a mapped commitHorizonMs on the tool; without one the horizon is the timeout', async () => {
    const path = writeDeskMapping(desk.url, {
      lagMs: LAG_MS,
      timeoutMs: 4_000,
      tools: {
        desk_open_ticket: {
          ...(deskMapping(desk.url, { lagMs: LAG_MS }).tools as Record<string, object>).desk_open_ticket,
          timeoutMs: 4_000,
          commitHorizonMs: 45_000,
        },
      },
    });
    const mapped = await createMcpUpstreamTools(loadMcpUpstreamMapping(path), { signal: stop.signal });
    const named = (name: string) => toolNamed(mapped, name);
    expect(commitHorizonOf(named('desk_open_ticket'))).toBe(45_000);
    expect(absenceEvidenceAfterMs(named('desk_open_ticket'))).toBe(45_000 + LAG_MS);
    expect(commitHorizonOf(named('desk_close_ticket'))).toBe(4_000);
  });

  it('stops the start naming an upstream tool the mapping needs and the upstream lacks', async () => {
    const path = writeDeskMapping(desk.url, {
      tools: { desk_list_tickets: { upstream: 'desk', tool: 'list_all', class: 'pure', version: 1 } },
    });
    const err = await rejectionOf(createMcpUpstreamTools(loadMcpUpstreamMapping(path)));
    expect(err).toBeInstanceOf(McpUpstreamUnavailableError);
    expect((err as Error).message).toBe(
      `upstream desk: has no tool list_all (tools.desk_list_tickets.tool in ${path})`,
    );
    const down = writeDeskMapping('http://127.0.0.1:9/mcp');
    expect(await rejectionOf(createMcpUpstreamTools(loadMcpUpstreamMapping(down)))).toBeInstanceOf(
      McpUpstreamUnavailableError,
    );
  });
});
