// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

export const TokenRole = { AGENT: 'agent', OPERATOR: 'operator' } as const;
export type TokenRole = (typeof TokenRole)[keyof typeof TokenRole];
