import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ROLE_NODE_FLAGS } from '@agent-saga/core';
import { REPO_ROOT } from './bench-config.js';

/** What the bench's roles run from dist, each beside the sources it is compiled from. */
const BUILT = [
  { dist: 'packages/saga-core/dist', src: 'packages/saga-core/src' },
  { dist: 'services/dispatcher/dist', src: 'services/dispatcher/src' },
  { dist: 'services/compensator/dist', src: 'services/compensator/src' },
  { dist: 'bench/dist', src: 'bench/noop-tools.ts' },
] as const;

/** The newest modification time of `path` (a file, or every file under a directory), and that file. */
function newest(path: string): { mtimeMs: number; file: string } {
  if (!statSync(path).isDirectory()) return { mtimeMs: statSync(path).mtimeMs, file: path };
  let best = { mtimeMs: 0, file: path };
  for (const name of readdirSync(path, { recursive: true, encoding: 'utf8' })) {
    const file = join(path, name);
    const st = statSync(file);
    if (st.isFile() && st.mtimeMs > best.mtimeMs) best = { mtimeMs: st.mtimeMs, file };
  }
  return best;
}

let builtChecked = false;

/**
 * Once per bench: fails when a role's `dist/` is missing, and says so (without failing) when a source is
 * newer than its last build (`pnpm bench` builds first; this catches `tsx bench/run.ts` on its own, and a
 * source saved while the bench starts). tsc -b writes `dist/tsconfig.tsbuildinfo` on every build.
 */
function checkBuilt(): void {
  if (builtChecked) return;
  builtChecked = true;
  for (const { dist, src } of BUILT) {
    const info = resolve(REPO_ROOT, dist, 'tsconfig.tsbuildinfo');
    if (!existsSync(info))
      throw new Error(`${dist} is missing: run \`pnpm build\` (pnpm bench does it first)`);
    const latest = newest(resolve(REPO_ROOT, src));
    if (latest.mtimeMs > statSync(info).mtimeMs)
      console.log(
        `· warning: ${relative(REPO_ROOT, latest.file)} is newer than ${dist}; the roles run the last build ` +
          '(`pnpm build` to include it)',
      );
  }
}

/** How a child process ended. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A child Node process: a role from dist ({@link startRole}) or a TypeScript entry ({@link startTsx}). */
export interface NodeChild {
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

/** A TypeScript entry point running as its own Node process (`node --import tsx <entry>`). */
export type TsxChild = NodeChild;

/**
 * Starts the role `services/<service>/dist/bin/<role>.js` as production does (`node` with
 * {@link ROLE_NODE_FLAGS}), with the current environment plus `env`; `nodeArgs` go after those flags
 * (e.g. `--cpu-prof`). The child is named `role`.
 */
export function startRole(
  service: string,
  role: string,
  env: Readonly<Record<string, string>>,
  nodeArgs: readonly string[] = [],
): NodeChild {
  checkBuilt();
  const entry = resolve(REPO_ROOT, 'services', service, 'dist', 'bin', `${role}.js`);
  return startNode(role, [...ROLE_NODE_FLAGS, ...nodeArgs, entry], env);
}

/**
 * Starts `entry` (a TypeScript file under the repository) through tsx with the current environment plus
 * `env`; `nodeArgs` go before the entry (e.g. `--cpu-prof`).
 */
export function startTsx(
  name: string,
  entry: string,
  env: Readonly<Record<string, string>>,
  nodeArgs: readonly string[] = [],
): TsxChild {
  return startNode(name, [...nodeArgs, '--import', 'tsx', entry], env);
}

function startNode(name: string, args: readonly string[], env: Readonly<Record<string, string>>): NodeChild {
  const child = spawn(process.execPath, args, {
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
  children: readonly NodeChild[] = [],
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
