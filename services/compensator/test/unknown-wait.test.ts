/**
 * How long the compensator lets an unknown outcome wait for evidence before it asks a person: never less
 * than the time after which a "not found" could be believed (the tool's commit horizon plus its lag, and
 * the re-check), so a vendor that declares a long horizon (a Jira create held for minutes) is waited out
 * rather than handed to a person who could only guess.
 */
import { describe, expect, it } from 'vitest';
import { loadCompensatorConfig } from '../src/config.js';
import { unknownWaitMs } from '../src/unwind/unwind-deps.js';

const config = loadCompensatorConfig({
  DATABASE_URL: 'postgres://x@127.0.0.1:5432/x',
  REDIS_URL: 'redis://127.0.0.1:6379',
  SAGA_TOOLS: 'unused.js',
  COMPENSATOR_UNKNOWN_MIN_WAIT_MS: '30000',
  COMPENSATOR_UNKNOWN_WAIT_FACTOR: '3',
  LOOKUP_RECHECK_MS: '1000',
});

describe('unknownWaitMs', () => {
  it('is the configured minimum for a quick tool, and the lag times the factor for a lagging one', () => {
    expect(unknownWaitMs(config, { timeoutMs: 5_000, lookupLagMs: 2_000 })).toBe(30_000);
    expect(unknownWaitMs(config, { timeoutMs: 5_000, lookupLagMs: 20_000 })).toBe(60_000);
  });

  it('waits past the commit horizon, its lag and the re-check of a tool that declares a long horizon', () => {
    const jira = { timeoutMs: 30_000, lookupLagMs: 5_000, commitHorizonMs: 120_000 };
    expect(unknownWaitMs(config, jira)).toBe(120_000 + 5_000 + 1_000);
    // Without a declared horizon, the tool's timeout is its horizon.
    expect(unknownWaitMs(config, { timeoutMs: 40_000, lookupLagMs: 0 })).toBe(41_000);
  });

  it('is the configured minimum for a tool this compensator does not know', () => {
    expect(unknownWaitMs(config, undefined)).toBe(30_000);
  });
});
