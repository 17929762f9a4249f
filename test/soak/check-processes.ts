/**
 * Checks about the processes and the chaos itself: that every fault the soak promises was played (a soak
 * that broke nothing proves nothing), and that no process exited on its own — a role the soak did not kill
 * that exited, through a Postgres or a Redis restart or otherwise, is named with its pid, how it ended,
 * when (and after which fault), and the tail of its output.
 */
import type { ArmedFault } from './sandbox-admin.js';
import type { ChaosLogEntry } from './chaos-schedule.js';
import { checkNone, type Check } from './soak-report.js';
import {
  ROLES,
  type ProcessExit,
  type ProcessName,
  type RoleName,
  type RoleSupervisor,
} from './start-roles.js';

export interface ProcessEvidence {
  readonly supervisor: RoleSupervisor;
  readonly exits: readonly ProcessExit[];
  readonly chaos: readonly ChaosLogEntry[];
  readonly faults: readonly ArmedFault[];
  /** Epoch ms every chaos `atMs` counts from. */
  readonly t0: number;
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** That each kind of fault was played, as many times as the log says. */
export function checkChaosPlayed(e: ProcessEvidence): Check[] {
  const played = e.chaos.filter((c) => c.error === undefined);
  const kills = new Map<RoleName, number>(ROLES.map((r) => [r, 0]));
  for (const c of played)
    if (c.kind === 'kill') for (const r of c.roles ?? []) kills.set(r, (kills.get(r) ?? 0) + 1);
  const count = (kind: ChaosLogEntry['kind']) => played.filter((c) => c.kind === kind).length;
  const fired = e.faults.filter((f) => f.fired > 0);
  const firedKinds = new Set(fired.map((f) => f.kind));
  return [
    checkNone(
      'every role was SIGKILLed at least once and started again',
      [...kills].filter(([, n]) => n === 0).map(([r]) => `${r} was never killed`),
      [[...kills].map(([r, n]) => `${r} ${n}×`).join(', ')],
    ),
    checkNone(
      'the executors were paused (SIGSTOP) and resumed (SIGCONT)',
      count('pause') === 0 ? ['no pause was played'] : [],
      played
        .filter((c) => c.kind === 'pause')
        .map((c) => `+${secs(c.atMs)} ${c.what} after ${secs(c.tookMs)}`),
    ),
    checkNone(
      'Redis was restarted, losing everything it held',
      count('restart-redis') === 0 ? ['Redis was never restarted'] : [],
      played
        .filter((c) => c.kind === 'restart-redis')
        .map((c) => `+${secs(c.atMs)} in ${secs(c.tookMs)}: ${c.what}`),
    ),
    checkNone(
      'Postgres was restarted',
      count('restart-postgres') === 0 ? ['Postgres was never restarted'] : [],
      played
        .filter((c) => c.kind === 'restart-postgres')
        .map((c) => `+${secs(c.atMs)} in ${secs(c.tookMs)}: ${c.what}`),
    ),
    checkNone(
      'lost answers were injected at the vendors (a 504 and a reset after the effect was committed)',
      ['error_after', 'reset_after']
        .filter((k) => !firedKinds.has(k))
        .map((k) => `no ${k} fault fired (${e.faults.filter((f) => f.kind === k).length} armed)`),
      [
        `${fired.length} of ${e.faults.length} armed faults fired: ` +
          e.faults
            .map((f) => `${f.vendor} ${f.path ?? '*'} ${f.kind}${f.fired > 0 ? '' : ' (not reached)'}`)
            .join('; '),
      ],
    ),
    checkNone(
      'every chaos action could be played',
      e.chaos.filter((c) => c.error !== undefined).map((c) => `+${secs(c.atMs)} ${c.what}: ${c.error ?? ''}`),
    ),
  ];
}

/** One check per process: it never exited unless the soak killed it. */
export function checkNoOwnExits(e: ProcessEvidence): Check[] {
  const names: readonly ProcessName[] = ['sandbox', ...ROLES];
  const infra = e.chaos.filter((c) => c.kind === 'restart-postgres' || c.kind === 'restart-redis');
  return names.map((name) => {
    const own = e.exits.filter((x) => x.name === name && !x.bySoak);
    const killed = e.exits.filter((x) => x.name === name && x.bySoak).length;
    return checkNone(
      name === 'sandbox'
        ? 'the sandbox never exited on its own'
        : `${name} outlived every Postgres and Redis restart: it never exited on its own`,
      own.map((x) => {
        const atMs = x.at - e.t0;
        const before = infra.filter((c) => c.atMs <= atMs).at(-1);
        const after = before ? `, ${secs(atMs - before.atMs)} after "${before.what}"` : '';
        const how = x.signal ? `signal ${x.signal}` : `code ${String(x.code)}`;
        const tail = crashLines(x.outputTail);
        return `pid ${x.pid ?? '?'} exited on its own (${how}) at +${secs(atMs)}${after}; restarted by the soak as a restart policy would. Output (tail):\n${tail || '(nothing)'}`;
      }),
      [`killed by the soak ${killed}×, started ${e.supervisor.starts(name)}×`],
    );
  });
}

/**
 * Where the explanation of an exit starts in a process's output, best first: the location line Node prints
 * above an uncaught error (`node:events:502`, `/path/file.ts:12`), a role's "failed to start" log line, the
 * last line naming an error.
 */
const CRASH_STARTS: readonly RegExp[] = [/^(node:[\w/]+|\/\S+):\d+$/, /failed to start/, /Error\b|error:/];

/** From the start of the crash report on, at most 30 lines, each cut at 300 characters; else the last 12. */
function crashLines(output: string): string {
  const lines = output.trim().split('\n');
  const lastMatch = (re: RegExp) => lines.findLastIndex((l) => re.test(l));
  const start = CRASH_STARTS.map(lastMatch).find((i) => i >= 0);
  const shown = start === undefined ? lines.slice(-12) : lines.slice(start, start + 30);
  return shown.map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l)).join('\n');
}
