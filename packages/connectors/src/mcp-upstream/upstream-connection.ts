import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  type CallToolRequest,
  type CallToolResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { OutcomeUnknownError } from '@agent-saga/core';
import { classifyMcpFailure } from './classify-mcp-failure.js';
import type { McpUpstreamEntry } from './mcp-upstream-mapping.js';
import { McpUpstreamUnavailableError } from './mcp-upstream-errors.js';

export type { McpTool };

/** Why 10 s: an upstream that does not answer `initialize` and `tools/list` in that time is down. */
const START_TIMEOUT_MS = 10_000;

/**
 * One MCP client connection to one upstream, shared by every tool on it. Opened on first use; after a call
 * whose outcome is unknown (a reset, a lost connection, a timeout) or an HTTP-level refusal, the connection
 * is dropped and the next call opens a new one, so a lost session or a half-dead socket is never reused.
 */
export class UpstreamConnection {
  #client: Promise<Client> | undefined;
  constructor(
    readonly name: string,
    readonly entry: McpUpstreamEntry,
  ) {}

  /** Every tool the upstream lists (all pages). Throws {@link McpUpstreamUnavailableError}. */
  async listTools(): Promise<McpTool[]> {
    try {
      const client = await this.#connected();
      const tools: McpTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: START_TIMEOUT_MS });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    } catch (err) {
      this.#drop();
      throw new McpUpstreamUnavailableError(
        this.name,
        `${this.entry.url} did not list its tools (${err instanceof Error ? err.message : String(err)})`,
        { cause: err },
      );
    }
  }

  /**
   * Sends one `tools/call` and returns the upstream's result as it came (`isError` included). Throws what
   * {@link classifyMcpFailure} decides. Sent with `request`, not `Client.callTool`: the SDK's client-side
   * check of structured content against the output schema would turn an answer the upstream gave (an
   * effect it made) into a local error that reads as a refusal.
   *
   * The call's `traceparent` travels in `params._meta.traceparent` (OpenTelemetry's convention for MCP): the
   * SDK's transport sets its HTTP headers once per connection, not per request, so the header cannot carry
   * it; this is the one place a `tools/call` is built, so every call and lookup carries it.
   */
  async call(
    params: CallToolRequest['params'],
    options: { readonly signal: AbortSignal; readonly timeoutMs: number; readonly traceparent?: string },
  ): Promise<CallToolResult> {
    try {
      const client = await this.#connected();
      const traced =
        options.traceparent === undefined
          ? params
          : { ...params, _meta: { ...params._meta, traceparent: options.traceparent } };
      return await client.request({ method: 'tools/call', params: traced }, CallToolResultSchema, {
        signal: options.signal,
        timeout: options.timeoutMs,
      });
    } catch (err) {
      const classified = classifyMcpFailure(this.name, err);
      // An HTTP-level refusal (a 404 for a session the upstream forgot) also drops the connection: the
      // next call initializes a new session instead of failing the same way forever.
      if (classified instanceof OutcomeUnknownError || err instanceof StreamableHTTPError) this.#drop();
      throw classified;
    }
  }

  async close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    await client?.then((c) => c.close()).catch(() => undefined);
  }

  #connected(): Promise<Client> {
    this.#client ??= this.#connect();
    return this.#client;
  }

  async #connect(): Promise<Client> {
    const client = new Client({ name: 'agent-saga', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(this.entry.url), {
      requestInit: { headers: { ...this.entry.headers } },
    });
    try {
      await client.connect(transport, { timeout: START_TIMEOUT_MS });
      return client;
    } catch (err) {
      this.#client = undefined;
      await client.close().catch(() => undefined);
      throw err;
    }
  }

  #drop(): void {
    void this.close();
  }
}
