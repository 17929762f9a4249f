/** The four systems the sandbox stands in for, each on its own port. Defined once; routes and faults use it. */
export const Vendor = {
  STRIPE: 'stripe',
  JIRA: 'jira',
  EMAIL: 'email',
  SHIPPING: 'shipping',
} as const;
export type Vendor = (typeof Vendor)[keyof typeof Vendor];

export const VENDORS: readonly Vendor[] = Object.values(Vendor);
