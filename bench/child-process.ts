import { spawn, type ChildProcess } from 'node:child_process';
import { REPO_ROOT } from './bench-config.js';

/** How a child process ended. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A TypeScript entry point running as its own Node process (`node --import tsx <entry>`). */
export interface TsxChild {
  readonly name: string;
  readonly child: ChildProcess;
  readonly exited: Promise<ChildExit>;
  /** Whether the process is still running. */
  running(): boolean;
  /** Everything it wrote to stdout and stderr so far (its warn-level JSON log lines). */
  output(): string;
  /**
   * SIGTERM, then waits up to `graceMs` for it to drain and exit; SIGKILL after that. Resolves with how
   * it ended; `killed` is true when the grace ran out.
   */
  stop(graceMs: number): Promise<ChildExit & { readonly killed: boolean }>;
}

/**
 * Starts `entry` (a path under the repository) with the current environment plus `env`; `nodeArgs` go
 * before the entry (e.g. `--cpu-prof`).
 */
export function startTsx(
  name: string,
  entry: string,
  env: Readonly<Record<string, string>>,
  nodeArgs: readonly string[] = [],
): TsxChild {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', entry], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<ChildExit>((res) => child.once('exit', (code, signal) => res({ code, signal })));
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    name,
    child,
    exited,
    running,
    output: () => out,
    async stop(graceMs) {
      if (!running()) return { ...(await exited), killed: false };
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((res) => (timer = setTimeout(() => res('late'), graceMs)));
      const first = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (first !== 'late') return { ...first, killed: false };
      child.kill('SIGKILL');
      return { ...(await exited), killed: true };
    },
  };
}

/** Polls `probe` every 200 ms until it is true; fails naming `what` after `timeoutMs` or if `child` exits. */
export async function waitUntil(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  children: readonly TsxChild[] = [],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = children.find((c) => !c.running());
    if (dead) throw new Error(`${dead.name} exited while waiting for ${what}:\n${dead.output()}`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
