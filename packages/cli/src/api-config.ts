import { createSagaClient, type SagaClient } from '@agent-saga/client';
import { InvalidArgumentError, type Command } from 'commander';
import { z } from 'zod';
import { CliUsageError, type CliIo } from './cli-io.js';

/**
 * Where the operator commands (`runs`, `approvals`, `cases`, `corrections`) find the dispatcher's HTTP API
 * and as whom they talk to it: `--url` / `--token`, or else `AGENT_SAGA_URL` / `AGENT_SAGA_TOKEN`. Parsed
 * once per command with zod into a frozen object. A missing or malformed setting is a usage error (exit 2)
 * naming the variable and its option; no message ever repeats the token's value.
 *
 * The variable is the better place for the token: a command-line argument shows up in `ps` and in shell
 * history.
 */
export const apiConfigSchema = z.object({
  AGENT_SAGA_URL: z.url({
    protocol: /^https?$/,
    error: (issue) => (issue.input === undefined ? 'not set' : 'must be an http:// or https:// URL'),
  }),
  AGENT_SAGA_TOKEN: z
    .string({ error: 'not set' })
    .trim()
    .min(1, 'is empty')
    .regex(/^\S+$/, 'must be one word (a token has no spaces)'),
});
export type ApiConfig = Readonly<z.infer<typeof apiConfigSchema>>;

/** The options every operator command takes, besides its own. */
export interface ApiOptions {
  readonly url?: string;
  readonly token?: string;
  readonly json?: boolean;
}

const OPTION_OF = { AGENT_SAGA_URL: '--url', AGENT_SAGA_TOKEN: '--token' } as const;

/** Options first, then the environment. */
export function parseApiConfig(io: CliIo, opts: ApiOptions): ApiConfig {
  const parsed = apiConfigSchema.safeParse({
    AGENT_SAGA_URL: opts.url ?? io.env.AGENT_SAGA_URL,
    AGENT_SAGA_TOKEN: opts.token ?? io.env.AGENT_SAGA_TOKEN,
  });
  if (parsed.success) return Object.freeze(parsed.data);
  const lines = parsed.error.issues.map((i) => {
    const name = String(i.path[0]) as keyof typeof OPTION_OF;
    return `${name} (or ${OPTION_OF[name]}): ${i.message}`;
  });
  throw new CliUsageError(`the dispatcher API is not configured:\n  ${lines.join('\n  ')}`);
}

/** A client of the configured API. */
export function connect(io: CliIo, opts: ApiOptions): SagaClient {
  const config = parseApiConfig(io, opts);
  return createSagaClient({ baseUrl: config.AGENT_SAGA_URL, token: config.AGENT_SAGA_TOKEN });
}

/** A subcommand of `parent` that talks to the API: `--url`, `--token` and `--json` added. */
export function apiCommand(parent: Command, nameAndArgs: string, description: string): Command {
  return parent
    .command(nameAndArgs)
    .description(description)
    .option('--url <url>', 'the dispatcher API (default: $AGENT_SAGA_URL)')
    .option('--token <token>', 'an API token (default: $AGENT_SAGA_TOKEN, the safer place for it)')
    .option('--json', 'print the API answer as JSON instead of text');
}

/** `--limit`: the list endpoints take 1 to 500 items. */
export function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 500)
    throw new InvalidArgumentError('a limit is an integer from 1 to 500.');
  return n;
}
