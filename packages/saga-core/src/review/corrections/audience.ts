// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

/** Who could see an effect. Internal audiences are corrected silently; `customer` needs a human. */
export const Audience = {
  AGENT: 'agent',
  SUPPORT_TEAM: 'support_team',
  FINANCE: 'finance',
  CUSTOMER: 'customer',
} as const;
export type Audience = (typeof Audience)[keyof typeof Audience];
