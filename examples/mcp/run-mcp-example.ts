/**
 * `pnpm example:mcp`: an MCP client session against agent-saga's MCP gateway, with the official client
 * (`Client` and `StreamableHTTPClientTransport` of `@modelcontextprotocol/sdk`), against the vendor sandbox
 * and the real connectors: the dispatcher (api, relay, executor), the reconciler and the gateway as child
 * processes (`../integration-harness.ts`). It ends with the sandbox's ledger: what the run really did.
 *
 * The client is scripted, as an MCP host's model would drive it:
 *  1. lists the tools and prints each one's annotations (read-only, destructive, idempotent, open-world);
 *  2. reads the order (a pure tool);
 *  3. opens a ticket, and Jira's answer is lost (504 after the ticket was made): the result's
 *     `structuredContent` says UNKNOWN (not an error), so the client makes the same call again, which the
 *     gateway lands on the same step and key: settled, one ticket;
 *  4. charges the card.
 * Every call names the run in `_meta` (`agent-saga/runId`), as an app that created the run would.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort, McpMetaKey } from '@agent-saga/core';
import { runExample, say, type Story } from '../integration-harness.js';
import { PLANNED_CALLS, scriptedPlan, type PlannedCall } from '../support-task.js';

/** The gateway's port: free now, handed to the gateway at start (its default is 8081). */
const mcpPort = await freePort();
const mcpUrl = `http://127.0.0.1:${mcpPort}`;

/** The calls of the support plan this session makes: the order, the ticket, the charge. */
const MCP_PLAN: readonly PlannedCall[] = [
  PLANNED_CALLS.getOrder,
  PLANNED_CALLS.createTicket,
  PLANNED_CALLS.chargeCard,
];

/** The harness's status in a tools/call result: its `structuredContent` (the adapters' object). */
function statusOf(structured: unknown): string | undefined {
  const status: unknown =
    typeof structured === 'object' && structured !== null && 'status' in structured
      ? structured.status
      : undefined;
  return typeof status === 'string' ? status : undefined;
}

const story: Story = async ({ agentToken, createRun }) => {
  const runId = await createRun();
  const client = new Client({ name: 'agent-saga-mcp-example', version: '0.1.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${mcpUrl}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${agentToken}` } },
  });
  await client.connect(transport);
  try {
    say(`connected to ${mcpUrl}/mcp as ${client.getServerVersion()?.name ?? 'an MCP server'}`);
    const { tools } = await client.listTools();
    say('\ntools/list:');
    for (const tool of tools) {
      const hints = Object.entries(tool.annotations ?? {})
        .filter(([k, v]) => k.endsWith('Hint') && v === true)
        .map(([k]) => k.replace(/Hint$/, ''));
      say(`   ${tool.name.padEnd(20)} ${hints.join(', ')}`);
    }
    say('\ntools/call:');
    const nextCall = scriptedPlan(MCP_PLAN);
    let ticketCalls = 0;
    let status: string | undefined;
    for (let call = await nextCall(undefined); call; call = await nextCall(status)) {
      const result = await client.callTool({
        name: call.tool,
        arguments: { ...call.args },
        _meta: { [McpMetaKey.RUN_ID]: runId },
      });
      status = statusOf(result.structuredContent);
      if (call.tool === 'create_ticket') ticketCalls++;
      const shown = JSON.stringify(result.structuredContent ?? result.content);
      say(`   ${call.tool.padEnd(14)} → ${result.isError ? 'isError ' : ''}${shown.slice(0, 150)}`);
    }
    return { runId, ticketCalls };
  } finally {
    await client.close();
  }
};

runExample(
  {
    name: 'mcp',
    defaultSchema: 'saga_mcp_example',
    scriptedOnly: true,
    expected: { tickets: 1, charges: 1, emails: 0 },
    alongside: (baseUrl) => [
      {
        entry: 'services/mcp-gateway/src/bin/mcp-gateway.ts',
        env: {
          SAGA_API_URL: baseUrl,
          MCP_HOST: '127.0.0.1',
          MCP_PORT: String(mcpPort),
          // Why 2 s: as the other examples' tools wait; an UNKNOWN is answered at once either way.
          MCP_WAIT_MS: '2000',
          LOG_LEVEL: 'warn',
        },
        readyUrl: `${mcpUrl}/healthz`,
      },
    ],
  },
  story,
);
