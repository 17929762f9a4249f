import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The real `agent-saga` executable, as a deployment runs it. */
export const BIN = fileURLToPath(new URL('../bin/agent-saga.mjs', import.meta.url));

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
    const child = spawn(process.execPath, [BIN, ...args], {
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
