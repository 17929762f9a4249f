import { runCli as runProgram } from '../src/program.js';
import type { CliRun } from './run-cli.js';

/**
 * Runs `agent-saga <args>` in this process with exactly `env`, capturing its output: the same program the
 * executable runs (`runCli` of program.ts), without the second or so a child process takes to load
 * TypeScript. For the operator commands, which talk HTTP and are many; `run-cli.ts` spawns the real
 * executable where the process itself matters.
 */
export async function runCliInProcess(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runProgram(args, {
    env,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  });
  return { code, stdout, stderr, lines: stdout.split('\n').filter((l) => l.trim() !== '') };
}
