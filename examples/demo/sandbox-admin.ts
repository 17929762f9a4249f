/**
 * The sandbox, seen from the demo: a separate process (`tools/sandbox/src/main.ts`) on free ports, and
 * its admin API over HTTP (docs/sandbox.md, "Admin API"): faults, reset and the ledger of effects. The
 * client and the process's environment are the sandbox package's, shared with the soak.
 */
import { freePort } from '@agent-saga/core';
import {
  sandboxAdminClient,
  sandboxProcessEnv,
  sandboxUrls,
  type SandboxAdminClient,
  type SandboxUrls,
} from '@agent-saga/sandbox';
import type { ProcessSupervisor, SupervisedProcess } from './process-supervisor.js';
import { waitFor } from './wait-for.js';

/** Every effect that exists in the sandbox, oldest first (the name the demo's printers and checks use). */
export type { LedgerAnswer as Ledger } from '@agent-saga/sandbox';

/** The search lag of both Stripe and Jira in the demo; the connectors are told the same. */
export const DEMO_SEARCH_LAG_MS = 500;

export interface RunningSandbox extends SandboxAdminClient {
  readonly process: SupervisedProcess;
  readonly urls: SandboxUrls;
  /** Resolves once the admin API answers; fails if the process exits first. */
  ready(): Promise<unknown>;
}

/**
 * Starts the sandbox as its own process on free ports, without waiting: its URLs are known at once, so the
 * harness's roles can start beside it (`ready()` waits for its admin API).
 */
export async function startSandboxProcess(supervisor: ProcessSupervisor): Promise<RunningSandbox> {
  const [admin, stripe, jira, email, shipping] = await Promise.all(
    Array.from({ length: 5 }, () => freePort()),
  );
  const ports = { admin: admin!, stripe: stripe!, jira: jira!, email: email!, shipping: shipping! };
  const urls = sandboxUrls(ports);
  const client = sandboxAdminClient(urls.admin);
  const proc = supervisor.start(
    'sandbox',
    'tools/sandbox/src/main.ts',
    sandboxProcessEnv(ports, DEMO_SEARCH_LAG_MS),
  );
  return {
    ...client,
    process: proc,
    urls,
    ready: () =>
      waitFor(
        'the sandbox admin API',
        async () => {
          if (proc.hasExited) throw new Error(`the sandbox exited at start:\n${proc.output()}`);
          return (await client.isUp()) ? true : undefined;
        },
        45_000,
        200,
      ),
  };
}
