import { readdir, readFile } from 'node:fs/promises';

/**
 * CPU time by process group, from Linux's /proc, so a phase can say where the machine's cores went: the
 * bench's own client, each role, Postgres, Redis, and everything else on the machine (other people's
 * builds and tests share these cores and make every figure noisier). Without /proc (not Linux) every
 * figure reads as zero and the report says so.
 *
 * Times are in clock ticks of USER_HZ, which is 100 on every Linux architecture Node supports.
 */
const TICKS_PER_S = 100;

/** Named processes to account for; Postgres and Redis are found by their command name. */
export interface CpuTargets {
  readonly pids: Readonly<Record<string, number | undefined>>;
}

export interface CpuSnapshot {
  readonly atMs: number;
  /** Busy and total ticks of the whole machine (all cores). */
  readonly machineBusy: number;
  readonly machineTotal: number;
  readonly groups: Readonly<Record<string, number>>;
  readonly available: boolean;
}

/** `utime + stime` of a process, plus `cutime + cstime` (its reaped children) when `withChildren`. */
async function procTicks(pid: number, withChildren = false): Promise<{ comm: string; ticks: number } | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // comm is parenthesised and may hold spaces: the fields after it are split from the last ')'.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const f = stat.slice(close + 2).split(' ');
    // After comm: f[0] is state (field 3), so field n is f[n - 3].
    const ticks = Number(f[11]) + Number(f[12]) + (withChildren ? Number(f[13]) + Number(f[14]) : 0);
    return { comm, ticks };
  } catch {
    return null;
  }
}

export async function readCpu(targets: CpuTargets): Promise<CpuSnapshot> {
  const atMs = performance.now();
  let machine: { busy: number; total: number };
  try {
    const first = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
    const v = first.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((s, x) => s + x, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    machine = { busy: total - idle, total };
  } catch {
    return { atMs, machineBusy: 0, machineTotal: 0, groups: {}, available: false };
  }
  const groups: Record<string, number> = { postgres: 0, redis: 0 };
  for (const [name, pid] of Object.entries(targets.pids))
    groups[name] = pid === undefined ? 0 : ((await procTicks(pid))?.ticks ?? 0);
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const p = await procTicks(pid);
    if (p?.comm === 'postgres') {
      // The postmaster's reaped children (backends that ended) count too.
      const withChildren = (await procTicks(pid, true))?.ticks ?? p.ticks;
      groups.postgres! += (await isPostmaster(pid)) ? withChildren : p.ticks;
    } else if (p?.comm === 'redis-server') groups.redis! += p.ticks;
  }
  return { atMs, machineBusy: machine.busy, machineTotal: machine.total, groups, available: true };
}

async function isPostmaster(pid: number): Promise<boolean> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const ppid = Number(/PPid:\s+(\d+)/.exec(status)?.[1]);
    return (await procTicks(ppid))?.comm !== 'postgres';
  } catch {
    return false;
  }
}

/** CPU seconds each group used between two snapshots, and the machine's capacity over the same time. */
export interface CpuUsage {
  readonly available: boolean;
  readonly seconds: number;
  readonly cores: number;
  /** Share of all cores busy, 0..1. */
  readonly machineBusyShare: number;
  /** CPU seconds per group, `other` being the machine's busy time not in any group. */
  readonly cpuSeconds: Readonly<Record<string, number>>;
}

export function cpuUsage(before: CpuSnapshot, after: CpuSnapshot, cores: number): CpuUsage {
  const cpuSeconds: Record<string, number> = {};
  let known = 0;
  for (const [name, t] of Object.entries(after.groups)) {
    const s = (t - (before.groups[name] ?? 0)) / TICKS_PER_S;
    cpuSeconds[name] = s;
    known += s;
  }
  const busy = (after.machineBusy - before.machineBusy) / TICKS_PER_S;
  const total = (after.machineTotal - before.machineTotal) / TICKS_PER_S;
  cpuSeconds.other = Math.max(0, busy - known);
  return {
    available: before.available && after.available,
    seconds: (after.atMs - before.atMs) / 1000,
    cores,
    machineBusyShare: total > 0 ? busy / total : 0,
    cpuSeconds,
  };
}
