// Defined once, here; migration 0017 spells its own list and migrate.test.ts checks the two agree.

/**
 * Which runs of its tenant a token may see and act on: `tenant`, every run (the default, as before 0017);
 * `own-runs`, only the runs it created (others answer 404, as if absent, so run ids cannot be probed).
 */
export const TokenScope = { TENANT: 'tenant', OWN_RUNS: 'own-runs' } as const;
export type TokenScope = (typeof TokenScope)[keyof typeof TokenScope];
