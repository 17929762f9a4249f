/**
 * Process supervision for the demo: every role (sandbox, api, relay, executors, reconciler, compensator)
 * is its own child process, as in production (a role compiled when the run asks, `SAGA_ROLES_COMPILED`;
 * else `node --import tsx <entry>`: core's `nodeArgsFor`). The supervisor keeps each one's
 * output (shown only when the story fails), knows which exits it asked for, and stops everything — SIGTERM,
 * then SIGKILL after a grace period — however the demo ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { nodeArgsFor } from '@agent-saga/core';
import { REPO_ROOT } from './demo-config.js';

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface SupervisedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves once the process has exited, with how. */
  readonly exited: Promise<ExitStatus>;
  /** Whether the process has exited (whatever the reason). */
  readonly hasExited: boolean;
  /** Whether the exit was asked for (by `stop`) or expected (a crash point the story arms). */
  readonly exitExpected: boolean;
  /** The last `maxChars` characters of its stdout and stderr. */
  output(maxChars?: number): string;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<ExitStatus>;
  /** Marks an exit as part of the story (the executor killed at its crash point). */
  expectExit(): void;
}

/** Why 8 s: an executor drains its running calls for EXECUTOR_DRAIN_MS (5 s in the demo) on SIGTERM. */
const DEFAULT_GRACE_MS = 8_000;
/** Output kept per process: enough for a stack trace and the log lines before it. */
const OUTPUT_KEPT = 20_000;

export class ProcessSupervisor {
  readonly #procs: SupervisedProcess[] = [];

  /** Every process started so far, in start order. */
  get processes(): readonly SupervisedProcess[] {
    return this.#procs;
  }

  /** Starts `entry` (relative to the repository root) with the supervisor's environment plus `env`. */
  start(name: string, entry: string, env: Readonly<Record<string, string>>): SupervisedProcess {
    const child = spawn(process.execPath, nodeArgsFor(resolve(REPO_ROOT, entry)), {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const keep = (b: Buffer) => {
      out = (out + b.toString()).slice(-OUTPUT_KEPT);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    let done = false;
    let expected = false;
    const exited = new Promise<ExitStatus>((res) => {
      child.once('exit', (code, signal) => {
        done = true;
        res({ code, signal });
      });
      child.once('error', (err) => {
        keep(Buffer.from(`spawn failed: ${err.message}\n`));
        done = true;
        res({ code: null, signal: null });
      });
    });
    const proc: SupervisedProcess = {
      name,
      child,
      exited,
      get hasExited() {
        return done;
      },
      get exitExpected() {
        return expected;
      },
      output: (maxChars = 4_000) => out.slice(-maxChars),
      async stop(graceMs = DEFAULT_GRACE_MS) {
        expected = true;
        if (done) return exited;
        child.kill('SIGTERM');
        const timer = setTimeout(() => {
          if (!done) child.kill('SIGKILL');
        }, graceMs);
        try {
          return await exited;
        } finally {
          clearTimeout(timer);
        }
      },
      expectExit() {
        expected = true;
      },
    };
    this.#procs.push(proc);
    return proc;
  }

  /** Processes that died without being asked to, each with its exit status. */
  async unexpectedExits(): Promise<readonly { proc: SupervisedProcess; status: ExitStatus }[]> {
    const dead = this.#procs.filter((p) => p.hasExited && !p.exitExpected);
    return Promise.all(dead.map(async (proc) => ({ proc, status: await proc.exited })));
  }

  /** Stops every process still running, all at once, each SIGTERM then SIGKILL after `graceMs`. */
  async stopAll(graceMs = DEFAULT_GRACE_MS): Promise<void> {
    await Promise.all(this.#procs.map((p) => p.stop(graceMs)));
  }
}
