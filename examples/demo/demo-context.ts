/**
 * What a story of the demo is given once the set-up is done (the deployed harness, the sandbox, a token
 * and a client), and which story `run-demo.ts` tells, from its command line.
 */
import type { SagaClient } from '@agent-saga/client';
import type { SagaDb } from '@agent-saga/core';
import type { Harness } from './harness-processes.js';
import type { RunningSandbox } from './sandbox-admin.js';

export interface DemoContext {
  /** The demo's own schema; the stories read it only for what the API does not show (email drafts). */
  readonly db: SagaDb;
  readonly sandbox: RunningSandbox;
  readonly harness: Harness;
  /** An agent token of tenant `acme` (label `demo-agent`), and a client that uses it. */
  readonly agentToken: string;
  readonly saga: SagaClient;
  readonly options: DemoOptions;
}

export interface DemoOptions {
  /** `--pivot`: the refund-and-reship run reordered around a pivot, approved once and rejected once. */
  readonly pivot: boolean;
  /** `--interactive` (with `--pivot`): a person decides each pivot with the CLI; the demo waits. */
  readonly interactive: boolean;
}

export const DEMO_USAGE = 'usage: pnpm demo [--pivot [--interactive]]';

/** Parses the demo's flags; anything else is refused with the usage line. */
export function parseDemoArgs(argv: readonly string[]): DemoOptions {
  // `--` is what some package managers put between their own flags and the script's.
  const unknown = argv.filter((a) => a !== '--pivot' && a !== '--interactive' && a !== '--');
  if (unknown.length > 0) throw new Error(`unknown argument ${unknown.join(' ')}\n${DEMO_USAGE}`);
  const pivot = argv.includes('--pivot');
  const interactive = argv.includes('--interactive');
  if (interactive && !pivot) throw new Error(`--interactive goes with --pivot\n${DEMO_USAGE}`);
  return Object.freeze({ pivot, interactive });
}
