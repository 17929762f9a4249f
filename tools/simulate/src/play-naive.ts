/**
 * `node --import tsx tools/simulate/src/play-naive.ts [--paced-by-stdin] --harness naive --episodes N --seed S
 * --concurrency C`: the naive harness in a process of its own, for a simulation of both harnesses
 * (naive-in-own-process.ts); with `--paced-by-stdin`, each episode waits until the agent-saga harness has
 * started it, read as counts on stdin (follow-leader-pace.ts).
 * Progress on stderr; on stdout one JSON line, every graded episode without its episode
 * ({@link toPlayedElsewhere}). Exit 0 when played, 1 on a failure.
 */
import { resolve } from 'node:path';
import { drawSelectedEpisodes } from './draw-episodes.js';
import { PACED_BY_STDIN, paceFromLines, UNPACED } from './follow-leader-pace.js';
import { toPlayedElsewhere } from './naive-in-own-process.js';
import { runNaive } from './run-simulation.js';
import { parseSimulateOptions } from './simulate-options.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const paced = argv.includes(PACED_BY_STDIN);
  const options = parseSimulateOptions(
    argv.filter((a) => a !== PACED_BY_STDIN),
    REPO_ROOT,
    process.env,
  );
  const graded = await runNaive(
    drawSelectedEpisodes(options.seed, options),
    options,
    (line) => process.stderr.write(`${line}\n`),
    paced ? paceFromLines(process.stdin) : UNPACED,
  );
  // Written whole before the exit: a pipe's writes are asynchronous, and an exit cuts them short.
  await new Promise<void>((done, fail) =>
    process.stdout.write(`${JSON.stringify(toPlayedElsewhere(graded))}\n`, (e) => (e ? fail(e) : done())),
  );
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`play-naive: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
