import { readFile } from 'node:fs/promises';

/** Resident memory of one process, in MiB. */
export interface ProcessMemory {
  /** VmRSS when read: what it holds at the end of the sustained window. */
  readonly rssMiB: number;
  /** VmHWM: the most it ever held (start-up and the whole load included). */
  readonly peakMiB: number;
}

/**
 * Resident memory of each named process from Linux's /proc/<pid>/status, read right after the sustained
 * window, while the roles still run: the "RSS of each role ≤ 150 MB under load" is checked on the
 * peak (VmHWM), the stricter of the two. A process without /proc (not Linux, or gone) is left out.
 */
export async function readRoleMemory(
  pids: Readonly<Record<string, number | undefined>>,
): Promise<Readonly<Record<string, ProcessMemory>>> {
  const out: Record<string, ProcessMemory> = {};
  for (const [name, pid] of Object.entries(pids)) {
    if (pid === undefined) continue;
    try {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
      const rss = kib('VmRSS');
      const peak = kib('VmHWM');
      if (Number.isFinite(rss) && Number.isFinite(peak))
        out[name] = { rssMiB: rss / 1024, peakMiB: peak / 1024 };
    } catch {
      // Not Linux, or the process has exited: nothing to report for it.
    }
  }
  return out;
}
