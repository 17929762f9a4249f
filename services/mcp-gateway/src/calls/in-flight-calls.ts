import { canonicalJson } from '@agent-saga/core';

/**
 * The calls of one run still waiting on the harness, by tool and canonical arguments, so that a call
 * re-issued while its first attempt is still in flight joins that attempt instead of becoming a new step.
 *
 * Why this is needed beside the run handle's own retry rule: MCP clients re-issue a call as a new request
 * when its response stream broke, and the gateway may still be waiting on the dispatcher for the first
 * one. The run handle counts a call to a tool whose open step is *in flight* as a new step (it cannot tell
 * a re-issue from a second intent), which the dispatcher would refuse as a duplicate of the open step. The
 * same tool with the same arguments in the same run while the first is pending is, for an MCP client, the
 * same request again: it awaits the same submission and reads the same answer (step, key, outcome).
 *
 * Keys use core's `canonicalJson` (keys sorted at every depth), so a client that re-serialises the
 * arguments in another key order still joins. An entry lives only while its submission is pending: a call
 * made after the answer is a call of its own (the run handle then makes it a retry of the open step; a
 * repeat of a settled one is answered by `replayReissuedCall`).
 */
export interface InFlightCalls<T> {
  /** The pending submission of the same call, or `start()` as a new one, kept until it settles. */
  join(
    tool: string,
    args: unknown,
    start: () => Promise<T>,
  ): { readonly joined: boolean; readonly answer: Promise<T> };
  /** Calls pending now. */
  readonly size: number;
  /** Settles once every call pending now has settled (never rejects). */
  settled(): Promise<void>;
}

export function createInFlightCalls<T>(): InFlightCalls<T> {
  const pending = new Map<string, Promise<T>>();
  return {
    join(tool, args, start) {
      const key = `${tool}\u0000${canonicalJson(args)}`;
      const existing = pending.get(key);
      if (existing) return { joined: true, answer: existing };
      const answer = start().finally(() => pending.delete(key));
      pending.set(key, answer);
      return { joined: false, answer };
    },
    get size() {
      return pending.size;
    },
    async settled() {
      await Promise.allSettled([...pending.values()]);
    },
  };
}
