/**
 * Every process of the soak, supervised: the sandbox and each role of the harness (api, relay, two
 * executors, reconciler, compensator), each its own process, compiled with production's flags when the
 * run asks (`SAGA_ROLES_COMPILED=true`, which `pnpm soak`, `pnpm simulate` and the test run set after
 * building; core's `nodeArgsFor`), else `node --import tsx <entry>`.
 *
 * The supervisor knows which exits it caused. `kill()` SIGKILLs a role and starts it again, as a
 * restart policy would; any other exit is the role's own, recorded with its pid, exit code or signal, the
 * time and the tail of its output, and — since a deployment's supervisor (compose's `restart:`) would
 * bring it back — the role is started again after a pause, so the rest of the soak still means something.
 * The sandbox is never restarted (its state lives in its memory: a restart would lose the ledger).
 * `stopAll()` ends everything, paused processes included, however the soak ends. Every process's whole
 * output is also written to `<logDir>/<name>.log` (each start marked), for the person debugging a failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { nodeArgsFor } from '@agent-saga/core';
import { sleep } from './seeded-random.js';

export const ROLES = ['api', 'relay', 'executor#1', 'executor#2', 'reconciler', 'compensator'] as const;
/** The api as two replicas behind one address, in place of `api` (the simulation's stack runs them so). */
export const API_REPLICAS = ['api#1', 'api#2'] as const;
export type RoleName = (typeof ROLES)[number] | (typeof API_REPLICAS)[number];
export type ProcessName = RoleName | 'sandbox';

const DISPATCHER_BIN = 'services/dispatcher/src/bin';
/** Where each process's entry point lives, relative to the repository root. */
export const ENTRY: Readonly<Record<ProcessName, string>> = {
  sandbox: 'tools/sandbox/src/main.ts',
  api: `${DISPATCHER_BIN}/api.ts`,
  'api#1': `${DISPATCHER_BIN}/api.ts`,
  'api#2': `${DISPATCHER_BIN}/api.ts`,
  relay: `${DISPATCHER_BIN}/relay.ts`,
  'executor#1': `${DISPATCHER_BIN}/executor.ts`,
  'executor#2': `${DISPATCHER_BIN}/executor.ts`,
  reconciler: 'services/reconciler/src/bin/reconciler.ts',
  compensator: 'services/compensator/src/bin/compensator.ts',
};

/** One process that ended, and whether the soak ended it. */
export interface ProcessExit {
  readonly name: ProcessName;
  readonly pid: number | undefined;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** When it exited (epoch ms). */
  readonly at: number;
  /** True when the soak killed it (chaos, or the final stop). */
  readonly bySoak: boolean;
  /** The last lines of its stdout and stderr (up to OUTPUT_KEPT characters). */
  readonly outputTail: string;
}

/** Output kept per process: a stack trace and the log lines before it. */
const OUTPUT_KEPT = 16_000;
/** Why 1 s: a restart policy's usual first back-off; long enough not to spin on a crash loop. */
const RESTART_PAUSE_MS = 1_000;
/** A role that exits on its own this often is crash-looping: the soak stops restarting it. */
const MAX_OWN_EXITS = 20;
/** Why 8 s: executors drain their running calls for EXECUTOR_DRAIN_MS (5 s in the soak) on SIGTERM. */
const STOP_GRACE_MS = 8_000;

interface Incarnation {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  output: string;
  bySoak: boolean;
  paused: boolean;
}

export class RoleSupervisor {
  readonly #repoRoot: string;
  readonly #logDir: string;
  readonly #bundleDir: string | undefined;
  readonly #env = new Map<ProcessName, Readonly<Record<string, string>>>();
  readonly #baseUrl = new Map<ProcessName, string>();
  readonly #current = new Map<ProcessName, Incarnation>();
  readonly #exits: ProcessExit[] = [];
  readonly #starts = new Map<ProcessName, number>();
  #closing = false;

  /**
   * `bundleDir`: where role bundles are (`agent-saga bundle`); a role with a bundle there starts from it
   * (core's `nodeArgsFor`), the others as before.
   */
  constructor(repoRoot: string, logDir: string, opts: { readonly bundleDir?: string } = {}) {
    this.#repoRoot = repoRoot;
    this.#logDir = logDir;
    this.#bundleDir = opts.bundleDir;
  }

  /** Every exit so far, in order. */
  get exits(): readonly ProcessExit[] {
    return this.#exits;
  }

  /** How many times each process was started. */
  starts(name: ProcessName): number {
    return this.#starts.get(name) ?? 0;
  }

  /** Whether `name` is running now (started, not exited). */
  isRunning(name: ProcessName): boolean {
    const inc = this.#current.get(name);
    return inc !== undefined && inc.child.exitCode === null && inc.child.signalCode === null;
  }

  pid(name: ProcessName): number | undefined {
    return this.#current.get(name)?.child.pid;
  }

  /** The output of the current (or last) incarnation of `name`. */
  output(name: ProcessName, maxChars = 4_000): string {
    return this.#current.get(name)?.output.slice(-maxChars) ?? '';
  }

  /**
   * Starts `name` with `env` on top of the soak's own environment; the same env serves its restarts.
   * `baseUrl` is where it answers `/healthz` and `/readyz` (the api's port, a worker's METRICS_PORT).
   */
  start(name: ProcessName, env: Readonly<Record<string, string>>, baseUrl?: string): void {
    this.#env.set(name, env);
    if (baseUrl) this.#baseUrl.set(name, baseUrl);
    this.#spawn(name);
  }

  /**
   * The HTTP status of `GET <baseUrl><path>` of `name` (`/healthz`: it has started; `/readyz`: its
   * dependencies answer), or null when it does not answer within 2 s or serves no such endpoint.
   */
  async probe(name: ProcessName, path: '/healthz' | '/readyz'): Promise<number | null> {
    const base = this.#baseUrl.get(name);
    if (!base || !this.isRunning(name)) return null;
    return fetch(`${base}${path}`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.status,
      () => null,
    );
  }

  #spawn(name: ProcessName): void {
    const env = this.#env.get(name);
    if (!env) throw new Error(`${name} was never started`);
    const entry = resolve(this.#repoRoot, ENTRY[name]);
    const child = spawn(process.execPath, nodeArgsFor(entry, undefined, this.#bundleDir), {
      cwd: this.#repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#starts.set(name, this.starts(name) + 1);
    let settle: () => void = () => undefined;
    const inc: Incarnation = {
      child,
      exited: new Promise<void>((r) => (settle = r)),
      output: '',
      bySoak: false,
      paused: false,
    };
    const logFile = join(this.#logDir, `${name.replace('#', '-')}.log`);
    const record = (text: string) => {
      try {
        appendFileSync(logFile, text);
      } catch {
        // The log file is a convenience; the output kept in memory is what the checks read.
      }
    };
    record(`=== ${new Date().toISOString()} start #${this.starts(name)} pid ${String(child.pid)} ===\n`);
    const keep = (b: Buffer) => {
      inc.output = (inc.output + b.toString()).slice(-OUTPUT_KEPT);
      record(b.toString());
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('error', (err) => keep(Buffer.from(`spawn failed: ${err.message}\n`)));
    child.once('exit', (code, signal) => {
      record(
        `=== ${new Date().toISOString()} exit ${signal ?? `code ${String(code)}`}${inc.bySoak ? ' (by the soak)' : ''} ===\n`,
      );
      this.#exits.push({
        name,
        pid: child.pid,
        code,
        signal,
        at: Date.now(),
        bySoak: inc.bySoak,
        outputTail: inc.output,
      });
      settle();
      if (!inc.bySoak && !this.#closing && name !== 'sandbox') void this.#restartAfterOwnExit(name);
    });
    this.#current.set(name, inc);
  }

  async #restartAfterOwnExit(name: ProcessName): Promise<void> {
    const own = this.#exits.filter((e) => e.name === name && !e.bySoak).length;
    if (own >= MAX_OWN_EXITS) return;
    await sleep(RESTART_PAUSE_MS);
    if (!this.#closing && !this.isRunning(name)) this.#spawn(name);
  }

  /** SIGKILLs `name` (waiting for it to die), then starts it again after `downMs`. */
  async kill(name: RoleName, downMs: number): Promise<{ pid: number | undefined }> {
    const inc = this.#current.get(name);
    const pid = inc?.child.pid;
    if (inc && this.isRunning(name)) {
      inc.bySoak = true;
      inc.child.kill('SIGKILL');
      await inc.exited;
    }
    await sleep(downMs);
    if (!this.#closing && !this.isRunning(name)) this.#spawn(name);
    return { pid };
  }

  /** SIGSTOP: the process keeps its sockets and locks but does nothing, as a long GC pause or a frozen VM. */
  pause(name: RoleName): number | undefined {
    const inc = this.#current.get(name);
    if (!inc || !this.isRunning(name)) return undefined;
    inc.paused = true;
    inc.child.kill('SIGSTOP');
    return inc.child.pid;
  }

  resume(name: RoleName): void {
    const inc = this.#current.get(name);
    if (!inc?.paused) return;
    inc.paused = false;
    if (this.isRunning(name)) inc.child.kill('SIGCONT');
  }

  /** Stops every process: SIGCONT where paused, SIGTERM, then SIGKILL after a grace. */
  async stopAll(graceMs = STOP_GRACE_MS): Promise<void> {
    this.#closing = true;
    await Promise.all(
      [...this.#current.values()].map(async (inc) => {
        inc.bySoak = true;
        if (inc.child.exitCode !== null || inc.child.signalCode !== null) return;
        if (inc.paused) inc.child.kill('SIGCONT');
        inc.child.kill('SIGTERM');
        const timer = setTimeout(() => inc.child.kill('SIGKILL'), graceMs);
        await inc.exited;
        clearTimeout(timer);
      }),
    );
  }

  /** Synchronous last resort (process 'exit'): SIGKILL everything still running. */
  killAllNow(): void {
    this.#closing = true;
    for (const inc of this.#current.values()) {
      if (inc.child.exitCode === null && inc.child.signalCode === null) {
        inc.bySoak = true;
        inc.child.kill('SIGKILL');
      }
    }
  }
}
