/**
 * What the soak breaks, and when. A schedule is drawn once from the seed, then played against the running
 * processes while the agents work:
 *
 * - every role SIGKILLed at least once (plus `extraKills` more, at random) and started again after a
 *   moment, as a restart policy would;
 * - both executors paused together (SIGSTOP, SIGCONT seconds later: their BullMQ locks lapse), and, in the
 *   default profile, one executor alone for longer;
 * - Redis restarted losing every key it held (queues, jobs, locks), and Postgres restarted (every
 *   connection cut); twice each in the default profile;
 * - lost answers at the vendors: a request processed and committed, then answered 504 (`error_after`) or
 *   with a reset connection (`reset_after`), on the forward calls and on the compensations.
 *
 * Process and infrastructure events play one after another; an infrastructure restart waits until every
 * role has been up for a few seconds, so that a role still booting (it checks the schema version at start)
 * is not what the restart catches. Lost answers are armed on their own clock beside them. Every event is
 * logged with its time and how long it took; an event that could not be played is a failure of the soak.
 */
import type { FaultSpec, SandboxAdmin } from './sandbox-admin.js';
import { sleep, type Random } from './seeded-random.js';
import type { ServiceControl } from './service-control.js';
import { ROLES, type RoleName, type RoleSupervisor } from './start-roles.js';
import type { SoakProfile } from './soak-options.js';

export type ChaosEvent =
  | { readonly kind: 'kill'; readonly atMs: number; readonly role: RoleName; readonly downMs: number }
  | {
      readonly kind: 'pause';
      readonly atMs: number;
      readonly roles: readonly RoleName[];
      readonly forMs: number;
    }
  | { readonly kind: 'restart-redis'; readonly atMs: number }
  | { readonly kind: 'restart-postgres'; readonly atMs: number };

export interface LostAnswer {
  readonly atMs: number;
  readonly fault: FaultSpec;
}

export interface ChaosSchedule {
  readonly events: readonly ChaosEvent[];
  readonly lostAnswers: readonly LostAnswer[];
}

/** What was done, when (ms since the soak's first agent), and whether it worked. */
export interface ChaosLogEntry {
  readonly atMs: number;
  readonly kind: ChaosEvent['kind'] | 'lost-answer';
  readonly what: string;
  readonly tookMs: number;
  readonly error?: string;
  /** The sandbox's id of an armed fault. */
  readonly faultId?: string;
  /** The roles a kill or a pause hit. */
  readonly roles?: readonly RoleName[];
}

/** The lost answers the soak arms: forward calls (create_ticket, charge_card, reship) and compensations. */
const LOST_ANSWERS: readonly FaultSpec[] = [
  { vendor: 'jira', method: 'POST', path: '/rest/api/3/issue', nth: 1, kind: 'error_after' },
  { vendor: 'stripe', method: 'POST', path: '/v1/payment_intents*', nth: 1, kind: 'reset_after' },
  { vendor: 'shipping', method: 'POST', path: '/v1/shipments', nth: 1, kind: 'error_after' },
  { vendor: 'stripe', method: 'POST', path: '/v1/refunds', nth: 1, kind: 'error_after' },
  { vendor: 'jira', method: 'POST', path: '/rest/api/3/issue/:key/transitions', nth: 1, kind: 'reset_after' },
  { vendor: 'shipping', method: 'POST', path: '/v1/shipments', nth: 1, kind: 'reset_after' },
];

/** Why 5 s and 8 s: longer than the executors' BullMQ lock (1 s in the soak), so their jobs stall. */
const PAUSE_ALL_MS = 5_000;
const PAUSE_ONE_MS = 8_000;

/** Draws the schedule: process and infrastructure events on even slots in a shuffled order. */
export function drawChaosSchedule(profile: SoakProfile, random: Random): ChaosSchedule {
  type Kind =
    | { kind: 'kill'; role: RoleName }
    | { kind: 'pause-all' }
    | { kind: 'pause-one' }
    | { kind: 'redis' }
    | { kind: 'postgres' };
  const kinds: Kind[] = [
    ...ROLES.map((role) => ({ kind: 'kill', role }) as const),
    ...Array.from(
      { length: profile.extraKills },
      () => ({ kind: 'kill', role: random.pick(ROLES) }) as const,
    ),
    { kind: 'pause-all' },
    { kind: 'redis' },
    { kind: 'postgres' },
  ];
  if (profile.name === 'default') kinds.push({ kind: 'pause-one' }, { kind: 'redis' }, { kind: 'postgres' });
  // Fisher–Yates, from the seed.
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [kinds[i], kinds[j]] = [kinds[j] as Kind, kinds[i] as Kind];
  }
  // The first slot a few seconds in (runs are under way); the last before the window ends.
  const first = 4_000;
  const slot = (profile.chaosWindowMs - first) / kinds.length;
  const events = kinds.map((k, i): ChaosEvent => {
    const atMs = Math.round(first + i * slot + random.next() * slot * 0.3);
    switch (k.kind) {
      case 'kill':
        return { kind: 'kill', atMs, role: k.role, downMs: random.int(300, 2_000) };
      case 'pause-all':
        return { kind: 'pause', atMs, roles: ['executor#1', 'executor#2'], forMs: PAUSE_ALL_MS };
      case 'pause-one':
        return {
          kind: 'pause',
          atMs,
          roles: [random.pick(['executor#1', 'executor#2'] as const)],
          forMs: PAUSE_ONE_MS,
        };
      case 'redis':
        return { kind: 'restart-redis', atMs };
      case 'postgres':
        return { kind: 'restart-postgres', atMs };
      default: {
        const never: never = k;
        throw new Error(`unknown chaos ${JSON.stringify(never)}`);
      }
    }
  });
  // Every kind of lost answer at least once, the rest at random, spread over the window.
  const faults = Array.from({ length: Math.max(profile.lostAnswers, LOST_ANSWERS.length) }, (_, i) =>
    i < LOST_ANSWERS.length ? (LOST_ANSWERS[i] as FaultSpec) : random.pick(LOST_ANSWERS),
  );
  // A forward call's fault is armed while runs still start; a compensation's once runs unwind.
  const isCompensation = (f: FaultSpec) =>
    f.path === '/v1/refunds' || f.path?.endsWith('/transitions') === true;
  const lostAnswers = faults
    .map((fault) => ({
      atMs: isCompensation(fault)
        ? random.int(Math.round(profile.startWindowMs / 2), profile.chaosWindowMs)
        : random.int(2_000, profile.startWindowMs),
      fault,
    }))
    .sort((a, b) => a.atMs - b.atMs);
  return { events, lostAnswers };
}

export interface ChaosDeps {
  readonly supervisor: RoleSupervisor;
  readonly services: ServiceControl;
  readonly sandbox: SandboxAdmin;
  /** Epoch ms of the first agent's start: every `atMs` counts from here. */
  readonly t0: number;
  /** Prints a line as it happens. */
  readonly say: (line: string) => void;
  /** Whether the soak is stopping (SIGINT, a time bound): the schedule ends early. */
  readonly stopping: () => boolean;
}

/** Plays the schedule; resolves with the log once every event was played (or the soak stops). */
export async function playChaos(schedule: ChaosSchedule, d: ChaosDeps): Promise<readonly ChaosLogEntry[]> {
  const log: ChaosLogEntry[] = [];
  const now = () => Date.now() - d.t0;
  const note = (e: ChaosLogEntry) => {
    log.push(e);
    d.say(
      `  chaos +${(e.atMs / 1000).toFixed(1)}s ${e.what}${e.tookMs > 0 ? ` (${(e.tookMs / 1000).toFixed(1)} s)` : ''}` +
        (e.error ? ` FAILED: ${e.error}` : ''),
    );
  };
  const waitUntil = async (atMs: number) => {
    while (now() < atMs && !d.stopping()) await sleep(Math.min(250, atMs - now()));
  };

  const lost = (async () => {
    for (const { atMs, fault } of schedule.lostAnswers) {
      await waitUntil(atMs);
      if (d.stopping()) return;
      const at = now();
      const what = `lost answer armed: ${fault.vendor} ${fault.method ?? '*'} ${fault.path ?? '*'} ${fault.kind}`;
      try {
        const faultId = await d.sandbox.addFault(fault);
        log.push({ atMs: at, kind: 'lost-answer', what, tookMs: 0, faultId });
      } catch (e) {
        note({ atMs: at, kind: 'lost-answer', what, tookMs: now() - at, error: String(e) });
      }
    }
  })();

  let infraBroken = false;
  for (const event of schedule.events) {
    await waitUntil(event.atMs);
    if (d.stopping()) break;
    if (event.kind === 'restart-redis' || event.kind === 'restart-postgres') {
      if (infraBroken) continue;
      await everyRoleUp(d);
    }
    const at = now();
    try {
      switch (event.kind) {
        case 'kill': {
          const { pid } = await d.supervisor.kill(event.role, event.downMs);
          note({
            atMs: at,
            kind: 'kill',
            what: `SIGKILL ${event.role} (pid ${pid ?? '?'}), started again`,
            tookMs: now() - at,
            roles: [event.role],
          });
          break;
        }
        case 'pause': {
          const pids = event.roles.map((r) => `${r} pid ${d.supervisor.pause(r) ?? '?'}`);
          await sleep(event.forMs);
          event.roles.forEach((r) => d.supervisor.resume(r));
          note({
            atMs: at,
            kind: 'pause',
            what: `SIGSTOP ${pids.join(', ')}; SIGCONT`,
            tookMs: now() - at,
            roles: event.roles,
          });
          break;
        }
        case 'restart-redis': {
          const how = await d.services.restartRedis();
          note({
            atMs: at,
            kind: 'restart-redis',
            what: `Redis restarted, every key lost (${how})`,
            tookMs: now() - at,
          });
          break;
        }
        case 'restart-postgres': {
          const how = await d.services.restartPostgres();
          note({
            atMs: at,
            kind: 'restart-postgres',
            what: `Postgres restarted (${how})`,
            tookMs: now() - at,
          });
          break;
        }
        default: {
          const never: never = event;
          throw new Error(`unknown chaos ${JSON.stringify(never)}`);
        }
      }
    } catch (e) {
      // A restart that failed (no right, a command missing) stops the infrastructure chaos, never the soak.
      if (event.kind === 'restart-redis' || event.kind === 'restart-postgres') infraBroken = true;
      note({
        atMs: at,
        kind: event.kind,
        what: describe(event),
        tookMs: now() - at,
        error: e instanceof Error ? e.message : String(e),
      });
    }
  }
  await lost;
  return log;
}

function describe(e: ChaosEvent): string {
  switch (e.kind) {
    case 'kill':
      return `SIGKILL ${e.role}`;
    case 'pause':
      return `SIGSTOP ${e.roles.join(', ')}`;
    case 'restart-redis':
      return 'Redis restart';
    case 'restart-postgres':
      return 'Postgres restart';
  }
}

/**
 * Waits (at most 60 s: a `tsx` boot on a loaded 2-core machine can take half of that) until every role
 * answers `/healthz`, i.e. has finished starting, so an infrastructure restart hits running roles.
 */
async function everyRoleUp(d: ChaosDeps): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !d.stopping()) {
    const up = await Promise.all(ROLES.map((r) => d.supervisor.probe(r, '/healthz')));
    if (up.every((status) => status === 200)) return;
    await sleep(250);
  }
}
