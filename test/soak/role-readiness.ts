/**
 * Whether the roles are up, as their own endpoints say: `/readyz` (200 once Postgres and Redis answer,
 * 503 naming what is down) on the api's port and on each worker's METRICS_PORT. Before the soak starts,
 * every role must be ready; after the faults, every role must be ready again.
 */
import type { Check } from './soak-report.js';
import { sleep } from './seeded-random.js';
import { ROLES, type RoleName, type RoleSupervisor } from './start-roles.js';

/**
 * Waits (at most 120 s: seven `tsx` processes boot at once on two cores) until every role of `roles`
 * answers `/readyz` with 200; a role that dies meanwhile fails the start.
 */
export async function waitForRoles(
  supervisor: RoleSupervisor,
  stopping: () => boolean,
  roles: readonly RoleName[] = ROLES,
): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!stopping()) {
    const dead = supervisor.exits.find((x) => !x.bySoak);
    if (dead)
      throw new Error(`${dead.name} exited at start (code ${String(dead.code)}):\n${dead.outputTail}`);
    const ready = await Promise.all(roles.map((r) => supervisor.probe(r, '/readyz')));
    if (ready.every((status) => status === 200)) return;
    if (Date.now() > deadline) {
      const notReady = roles.filter((_, i) => ready[i] !== 200);
      throw new Error(
        `not ready within 120 s: ${notReady.join(', ')}\n${notReady.map((r) => `--- ${r}\n${supervisor.output(r)}`).join('\n')}`,
      );
    }
    await sleep(500);
  }
  throw new Error('stopped before every role was ready');
}

/**
 * After the faults, every role must be ready again: `/readyz` answers 200 once Postgres and Redis are
 * back. Waits at most 30 s for each; one check per role that is not.
 */
export async function checkReadyAgain(supervisor: RoleSupervisor): Promise<Check> {
  const deadline = Date.now() + 30_000;
  let last: (number | null)[] = [];
  while (Date.now() < deadline) {
    last = await Promise.all(ROLES.map((r) => supervisor.probe(r, '/readyz')));
    if (last.every((s) => s === 200)) break;
    await sleep(500);
  }
  const offenders = ROLES.flatMap((r, i) =>
    last[i] === 200
      ? []
      : [`${r}: /readyz answered ${String(last[i] ?? 'nothing')}\n${supervisor.output(r, 1_500)}`],
  );
  return {
    name: 'every role answers /readyz 200 after the faults',
    ok: offenders.length === 0,
    details: offenders,
  };
}
