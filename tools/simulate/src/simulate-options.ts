/**
 * The command line of `pnpm simulate`, parsed once with zod into a frozen object. A bad flag throws a
 * {@link UsageError} naming it (the entry point prints it with the usage line and exits 2).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';

export const Harness = { AGENT_SAGA: 'agent-saga', NAIVE: 'naive' } as const;
export type Harness = (typeof Harness)[keyof typeof Harness];
export const HARNESSES: readonly Harness[] = Object.values(Harness);

/**
 * Why these bounds: 100,000 episodes is ten times the issue's target run. Seeds are 32-bit (the random
 * source is mulberry32). 128 in flight is past what two cores serve: at 96 both harnesses together kept the
 * two cores at 100 % and an episode took 22 s to settle (median) instead of 6–8 s at 64, with fewer episodes
 * an hour than at 64 (measured 2 December 2026, docs/simulation.md).
 */
export const MAX_CONCURRENCY = 128;

/**
 * Why at most 64 in flight when the lanes follow the machine (the default): an episode mostly waits (tool
 * timeouts of 3 s, Jira's 14 s commit horizon, the search lag), so more in flight means more episodes an
 * hour until the CPU is the bound. On a fast 2-core machine 64 gave 0.09–0.27 s of wall time per episode
 * for both harnesses (32 gave 0.26–0.40 s); 10,000 took 15.6–32 minutes; at 96 the episodes an hour fell and
 * settle times tripled. A slower machine reaches its knee sooner (size-lanes-to-machine.ts), which is why
 * the lanes are sized as the run goes, below this bound, unless `--concurrency C` fixes them.
 */
export const DEFAULT_CONCURRENCY = 64;

export const SIMULATE_USAGE =
  'usage: pnpm simulate [--episodes N] [--seed S] [--harness agent-saga|naive|both] [--concurrency C] [--json] [--keep-log] [--only I,J]\n' +
  '  --episodes N     how many seeded episodes (default 200)\n' +
  '  --seed S         seed of the episodes (default: time-based, printed); same seed, same episodes\n' +
  '  --harness H      agent-saga, naive or both (default both): which harnesses play the episodes\n' +
  `  --concurrency C  episodes in flight at once per harness, fixed; default auto: sized to the machine as\n` +
  `                   the run goes (from its settle times), up to ${DEFAULT_CONCURRENCY}\n` +
  '  --json           print one JSON object (totals, byFaultMode, byPolicy) instead of the tables\n' +
  "  --keep-log       keep agent-saga's saga log (its schema, named on stderr) to read the episodes after\n" +
  '  --only I,J       play only these episodes of the seed (their indices, as the listings name them: #828)\n' +
  '  --real-model N   a real model plays the first N episodes without a pivot, through the AI SDK\n' +
  '                   (needs OPENAI_API_KEY; OPENAI_MODEL, default gpt-4o-mini)';

/** A bad command line: the message names the flag. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface SimulateOptions {
  readonly episodes: number;
  readonly seed: number;
  readonly harnesses: readonly Harness[];
  /** Episodes in flight at once per harness: the bound, when `adaptiveLanes`; else the fixed number. */
  readonly concurrency: number;
  /** Size the lanes to the machine as the run goes, up to `concurrency` (size-lanes-to-machine.ts). */
  readonly adaptiveLanes: boolean;
  readonly json: boolean;
  /** Keep the agent-saga harness's schema (the saga log of every episode) instead of dropping it. */
  readonly keepLog: boolean;
  /**
   * Only these episodes of the seed (`--only 828,836`), to replay the ones a run listed; `episodes` is then
   * their count. The rest of the run (the other episodes' process faults and load) is not replayed.
   */
  readonly only?: readonly number[];
  /**
   * `--real-model N`: a real model (OpenAI's `model`, through the AI SDK) plays the first `episodes`
   * episodes without a pivot (play-model-agent.ts); the scripted agent plays the rest.
   */
  readonly realModel?: { readonly episodes: number; readonly model: string };
  /** From the environment or `.env` (as `vitest.config.ts` reads it); needed by the agent-saga harness. */
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
}

const positiveInt = (max: number) => z.coerce.number().int().min(1).max(max);

const flagsSchema = z.object({
  '--episodes': positiveInt(100_000).default(200),
  '--seed': z.coerce.number().int().min(1).max(0xffff_ffff).optional(),
  '--harness': z.enum(['agent-saga', 'naive', 'both']).default('both'),
  '--concurrency': z.union([z.literal('auto'), positiveInt(MAX_CONCURRENCY)]).default('auto'),
  '--json': z.boolean().default(false),
  '--keep-log': z.boolean().default(false),
  '--only': z
    .string()
    .regex(/^\d+(,\d+)*$/, 'expected episode indices separated by commas, e.g. 828,836')
    .transform((s) => [...new Set(s.split(',').map(Number))])
    .optional(),
  '--real-model': positiveInt(1_000).optional(),
});

/** Why gpt-4o-mini: the examples' default (`pnpm example:ai-sdk`), a small model with tool calling. */
const DEFAULT_MODEL = 'gpt-4o-mini';

const envSchema = z.object({
  DATABASE_URL: z.url().optional(),
  REDIS_URL: z.url().optional(),
});

const VALUED = new Set(['--episodes', '--seed', '--harness', '--concurrency', '--only', '--real-model']);

/** Parses argv (after the script name); `repoRoot` is where `.env` may be. */
export function parseSimulateOptions(
  argv: readonly string[],
  repoRoot: string,
  environment: Readonly<Record<string, string | undefined>>,
): SimulateOptions {
  const raw: Record<string, unknown> = {};
  const args = argv.filter((a) => a !== '--');
  for (let i = 0; i < args.length; i++) {
    const flag = args[i] ?? '';
    if (flag === '--json' || flag === '--keep-log') raw[flag] = true;
    else if (VALUED.has(flag)) {
      const value = args[++i];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`${flag} needs a value`);
      raw[flag] = value;
    } else throw new UsageError(`unknown argument ${flag}`);
  }
  const parsed = flagsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const flag = String(issue?.path[0] ?? 'argument');
    throw new UsageError(`${flag}: ${issue?.message ?? 'invalid'} (got ${JSON.stringify(raw[flag])})`);
  }
  const f = parsed.data;
  const dotenvPath = resolve(repoRoot, '.env');
  const dotenv = existsSync(dotenvPath) ? parseEnv(readFileSync(dotenvPath, 'utf8')) : {};
  const env = envSchema.safeParse({
    DATABASE_URL: environment.DATABASE_URL ?? dotenv.DATABASE_URL,
    REDIS_URL: environment.REDIS_URL ?? dotenv.REDIS_URL,
  });
  if (!env.success) throw new UsageError(`${String(env.error.issues[0]?.path[0])}: not a URL`);
  const harnesses = f['--harness'] === 'both' ? HARNESSES : [f['--harness']];
  const apiKey = environment.OPENAI_API_KEY ?? dotenv.OPENAI_API_KEY;
  if (f['--real-model'] !== undefined && !apiKey)
    throw new UsageError('--real-model needs OPENAI_API_KEY (the model is called through the AI SDK)');
  if (harnesses.includes(Harness.AGENT_SAGA) && (!env.data.DATABASE_URL || !env.data.REDIS_URL))
    throw new UsageError('the agent-saga harness needs DATABASE_URL and REDIS_URL (or `pnpm bootstrap`)');
  return Object.freeze({
    episodes: f['--only']?.length ?? f['--episodes'],
    ...(f['--only'] ? { only: f['--only'] } : {}),
    seed: f['--seed'] ?? (Date.now() % 1_000_000) + 1,
    harnesses,
    concurrency: f['--concurrency'] === 'auto' ? DEFAULT_CONCURRENCY : f['--concurrency'],
    adaptiveLanes: f['--concurrency'] === 'auto',
    json: f['--json'],
    keepLog: f['--keep-log'],
    ...(f['--real-model'] === undefined
      ? {}
      : {
          realModel: {
            episodes: f['--real-model'],
            model: environment.OPENAI_MODEL ?? dotenv.OPENAI_MODEL ?? DEFAULT_MODEL,
          },
        }),
    databaseUrl: env.data.DATABASE_URL,
    redisUrl: env.data.REDIS_URL,
  });
}
