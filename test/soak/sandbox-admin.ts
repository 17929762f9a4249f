/**
 * The vendor sandbox as the soak drives it: its own process (`tools/sandbox/src/main.ts`, what
 * `pnpm sandbox` runs) on free ports, and its admin API over HTTP (docs/sandbox.md, "Admin API"): the
 * soak's orders seeded, lost answers armed as faults, the ledger of effects read at the end. The client,
 * the process's environment and the connectors' are the sandbox package's, shared with the demo.
 */
import { freePort } from '@agent-saga/core';
import {
  DEFAULT_CREDENTIALS,
  sandboxAdminClient,
  sandboxConnectorEnv,
  sandboxProcessEnv,
  sandboxUrls,
  type SandboxAdminClient,
  type SandboxUrls,
} from '@agent-saga/sandbox';
import { sleep } from './seeded-random.js';
import type { RoleSupervisor } from './start-roles.js';

/** The names the soak's checks and chaos schedule use for the sandbox client's types. */
export type {
  ArmedFault,
  FaultSpecInput as FaultSpec,
  LedgerAnswer as SoakLedger,
} from '@agent-saga/sandbox';

export interface SandboxAdmin extends SandboxAdminClient {
  readonly urls: SandboxUrls;
}

/** The vendors' search lag, and what the connectors are told (they must agree). */
export const SEARCH_LAG_MS = 500;

/** Starts the sandbox under `supervisor` on free ports and waits until its admin API answers. */
export async function startSandbox(supervisor: RoleSupervisor): Promise<SandboxAdmin> {
  const [admin, stripe, jira, email, shipping] = await Promise.all(
    Array.from({ length: 5 }, () => freePort()),
  );
  const ports = { admin: admin!, stripe: stripe!, jira: jira!, email: email!, shipping: shipping! };
  const urls = sandboxUrls(ports);
  const client = sandboxAdminClient(urls.admin);
  supervisor.start('sandbox', sandboxProcessEnv(ports, SEARCH_LAG_MS));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!supervisor.isRunning('sandbox'))
      throw new Error(`the sandbox exited at start:\n${supervisor.output('sandbox')}`);
    if (await client.isUp()) break;
    if (Date.now() > deadline) throw new Error('the sandbox admin API did not answer within 60 s');
    await sleep(200);
  }
  return { urls, ...client };
}

/** The connector configuration that points every vendor at the sandbox. */
export function connectorEnv(urls: SandboxUrls): Record<string, string> {
  return sandboxConnectorEnv(
    { urls, credentials: DEFAULT_CREDENTIALS },
    { lagMs: SEARCH_LAG_MS, toolsModule: 'packages/connectors/src/support-agent-tools.ts' },
  );
}
