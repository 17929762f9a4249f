import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { nodeArgsFor, rolesCompiled } from '@agent-saga/core';

/** The real `agent-saga` executable, as a deployment runs it. */
export const BIN = fileURLToPath(new URL('../bin/agent-saga.mjs', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

/**
 * The command as `node` runs it: compiled when the test run built it (`SAGA_ROLES_COMPILED`, core's
 * `nodeArgsFor`), else the executable, which loads the sources through tsx.
 */
const command = (): string[] => (rolesCompiled() ? nodeArgsFor(MAIN) : [BIN]);

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Non-empty stdout lines. */
  readonly lines: readonly string[];
}

/**
 * Runs `agent-saga <args>` as a child process with exactly `env` (plus PATH), so that nothing from the
 * test runner's environment leaks into the command.
 */
export function runCli(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...command(), ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, stdout, stderr, lines: stdout.split('\n').filter((l) => l.trim() !== '') }),
    );
  });
}
