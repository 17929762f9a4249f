import {
  createSagaClient,
  isToolArgs,
  submitCall,
  type RunHandle,
  type SagaClient,
  type Submission,
} from '@agent-saga/client';
import { hashToken } from '@agent-saga/core';
import { createInFlightCalls, type InFlightCalls } from '../calls/in-flight-calls.js';
import { replayReissuedCall } from '../calls/replay-reissued-call.js';

/** A call of a model, as the gateway submits it to one run. */
export interface RunCall {
  /** The agent's token, as its session presented it. */
  readonly token: string;
  readonly runId: string;
  readonly tool: string;
  /** As the client sent them: what is not a JSON object is answered without a request. */
  readonly args: unknown;
  readonly waitMs: number;
}

/**
 * The runs the gateway's sessions call into, one entry per (token, run) for the whole process: every
 * session naming a run shares its `RunHandle` (one count of its steps, one set of open steps) and its
 * in-flight calls, so a call re-issued on another session, or after a broken stream, lands where the first
 * attempt did.
 *
 * Keyed by the token's hash rather than its tenant (the gateway cannot read a token's tenant; the API
 * has no "who am I"): a token belongs to one tenant, so no handle is ever shared across tenants. Two
 * tokens of one tenant naming one run get two handles, which stay correct because each reads the log
 * (a STEP_CONFLICT makes a handle re-read it); only the joining of in-flight calls is per token.
 */
export interface GatewayRuns {
  /**
   * Submits the call in its run: joins an identical call in flight (`joined`), else `run.call`. The
   * answer never rejects.
   */
  submit(call: RunCall): { readonly joined: boolean; readonly answer: Promise<Submission> };
  /** The process's client for a token: one per token, so its connection pool is shared by its sessions. */
  clientFor(token: string): SagaClient;
  /** Settles once every call in flight now has been answered. */
  settled(): Promise<void>;
}

interface RunEntry {
  readonly client: SagaClient;
  readonly handle: RunHandle;
  /** The run's creation (idempotent), once per entry; reset when it failed so the next call tries again. */
  created: Promise<unknown> | undefined;
  readonly calls: InFlightCalls<Submission>;
}

/**
 * Why 10 000: an entry is a step count and a few open steps, so the cap costs little memory, and it is far
 * above the runs a gateway's live sessions use at once. An evicted run costs one log read on its next call
 * (a new handle syncs from the log), never a wrong step.
 */
const MAX_RUN_ENTRIES = 10_000;

export function createGatewayRuns(options: { readonly apiUrl: string }): GatewayRuns {
  const entries = new Map<string, RunEntry>();
  const clients = new Map<string, SagaClient>();

  function clientFor(token: string): SagaClient {
    const key = hashToken(token);
    let client = clients.get(key);
    if (!client) {
      // Tokens are few (one per agent deployment), so the map is not capped; a new token is one entry.
      client = createSagaClient({ baseUrl: options.apiUrl, token });
      clients.set(key, client);
    }
    return client;
  }

  function entryFor(call: RunCall): RunEntry {
    const key = `${hashToken(call.token)}\u0000${call.runId}`;
    let entry = entries.get(key);
    if (entry)
      entries.delete(key); // re-inserted below: the map's order is the order of last use
    else {
      const client = clientFor(call.token);
      entry = { client, handle: client.run(call.runId), created: undefined, calls: createInFlightCalls() };
    }
    entries.set(key, entry);
    evictIdle();
    return entry;
  }

  /** Drops the least recently used runs with nothing in flight, down to the cap. */
  function evictIdle(): void {
    if (entries.size <= MAX_RUN_ENTRIES) return;
    for (const [key, entry] of entries) {
      if (entries.size <= MAX_RUN_ENTRIES) return;
      if (entry.calls.size === 0) entries.delete(key);
    }
  }

  /**
   * The run exists before its first call: `createRun` with its id is idempotent (200 when it exists, its
   * policy unchanged), so a session's own run is created on its first call and a run a client names in
   * `_meta` is created plain when its app has not created it.
   */
  function ensureCreated(entry: RunEntry, call: RunCall): Promise<unknown> {
    entry.created ??= entry.client
      .createRun({ runId: call.runId, metadata: { via: 'mcp-gateway' } })
      .catch((err: unknown) => {
        entry.created = undefined;
        throw err;
      });
    return entry.created;
  }

  /**
   * The call through the run handle (`submitCall`, as every framework adapter makes it), then, when the
   * harness took it for a duplicate of an earlier identical step, that step's outcome (see
   * `replayReissuedCall`). Never rejects.
   */
  async function send(entry: RunEntry, call: RunCall & { readonly args: Readonly<Record<string, unknown>> }) {
    try {
      await ensureCreated(entry, call);
    } catch (error) {
      return { ok: false, error } satisfies Submission;
    }
    const submission = await submitCall(entry.handle, call.tool, call.args, call.waitMs);
    return replayReissuedCall(entry.client, call, submission);
  }

  return {
    submit(call) {
      const entry = entryFor(call);
      // Not an object: refused by `submitCall` before any request, so not worth joining or creating the run.
      const { args } = call;
      if (!isToolArgs(args))
        return { joined: false, answer: submitCall(entry.handle, call.tool, args, call.waitMs) };
      return entry.calls.join(call.tool, args, () => send(entry, { ...call, args }));
    },
    clientFor,
    async settled() {
      await Promise.all([...entries.values()].map((e) => e.calls.settled()));
    },
  };
}
