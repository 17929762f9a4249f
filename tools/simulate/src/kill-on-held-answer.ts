/**
 * The process faults of the agent-saga harness (`executor_killed`, `api_restart`; fault-modes.ts): the
 * sandbox holds the answer of the episode's request after processing it (the effect exists, the answer is
 * saved), and while it waits this watcher SIGKILLs a role through the soak's supervisor, which starts it
 * again after {@link DOWN_MS}:
 * - `kill:sender`: the process that sent the held request (found by its socket, find-socket-owner.ts):
 *   the executor dies after the vendor answered and before it recorded the outcome;
 * - `kill:api`: the api replica the agent's call waits on (the call waits up to 2 s for the outcome), as
 *   the balancer in front of the replicas tells (api-balancer.ts); the other replica serves the retries.
 *
 * Why a sandbox-side trigger rather than core's crash points: those are per-process switches that kill at
 * every step; the fault aims at one request of one episode. A kill takes down every call the process holds,
 * so the other episodes in flight on it meet the crash too (they are counted under their own modes).
 */
import type { RunningSandbox } from '@agent-saga/sandbox';
import { sleep } from '../../../test/soak/seeded-random.js';
import type { RoleName, RoleSupervisor } from '../../../test/soak/start-roles.js';
import type { ApiBalancer } from './api-balancer.js';
import { ProcessFault } from './fault-modes.js';
import { ownerOfSocket, socketInode } from './find-socket-owner.js';

/** Why 50 ms: the shortest hold is half of Stripe's 1.5 s timeout; a kill lands well inside it. */
const POLL_MS = 50;
/** Why 300 ms: a restart policy's quick restart; the role's own boot (tsx, pools) takes longer anyway. */
const DOWN_MS = 300;

export interface ProcessKills {
  /** Kills made, per role. */
  readonly kills: ReadonlyMap<RoleName, number>;
  /**
   * Held answers whose sender no role owned (e.g. it had closed the connection already), or whose
   * episode no api replica had served.
   */
  readonly missed: number;
  stop(): Promise<void>;
}

export function killOnHeldAnswers(
  sandbox: RunningSandbox,
  supervisor: RoleSupervisor,
  /** Every role of the stack, the api replicas included. */
  roles: readonly RoleName[],
  balancer: ApiBalancer,
): ProcessKills {
  const handled = new Map<string, number>();
  const kills = new Map<RoleName, number>();
  const restarts: Promise<unknown>[] = [];
  let missed = 0;
  let stopped = false;

  const kill = (role: RoleName) => {
    kills.set(role, (kills.get(role) ?? 0) + 1);
    restarts.push(supervisor.kill(role, DOWN_MS));
  };

  const senderOf = (vendor: keyof RunningSandbox['ports'], clientPort: number): RoleName | undefined => {
    const inode = socketInode(clientPort, sandbox.ports[vendor]);
    if (inode === undefined) return undefined;
    const pids = new Map<RoleName, number>();
    for (const role of roles) {
      const pid = supervisor.pid(role);
      if (pid !== undefined && supervisor.isRunning(role)) pids.set(role, pid);
    }
    return ownerOfSocket(inode, pids);
  };

  const tick = () => {
    for (const rule of sandbox.admin.faults()) {
      if (rule.note !== ProcessFault.KILL_SENDER && rule.note !== ProcessFault.KILL_API) continue;
      if (rule.processed <= (handled.get(rule.id) ?? 0)) continue;
      handled.set(rule.id, rule.processed);
      if (rule.note === ProcessFault.KILL_API) {
        const holder = roles.find((r) => r === balancer.holderOf(rule.contains ?? ''));
        if (holder === undefined) missed += 1;
        else kill(holder);
        continue;
      }
      const sender =
        rule.lastClientPort === undefined ? undefined : senderOf(rule.vendor, rule.lastClientPort);
      if (sender === undefined) missed += 1;
      else kill(sender);
    }
  };

  const loop = (async () => {
    while (!stopped) {
      tick();
      await sleep(POLL_MS);
    }
  })();

  return {
    kills,
    get missed() {
      return missed;
    },
    async stop() {
      stopped = true;
      await loop;
      await Promise.allSettled(restarts);
    },
  };
}
