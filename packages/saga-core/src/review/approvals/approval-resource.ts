/**
 * The resource a call touches, as far as its arguments name one: the fields a person deciding an approval
 * looks for first (who is written to, which customer, payment, ticket or order). Part of an approval's
 * evidence, for a held step and for each action of a pivot.
 */
export function resourceOf(args: Record<string, unknown>): Record<string, unknown> {
  const names = ['to', 'customerId', 'paymentIntent', 'payment', 'ticket', 'issueKey', 'orderId', 'project'];
  return Object.fromEntries(names.filter((n) => args[n] !== undefined).map((n) => [n, args[n]]));
}
