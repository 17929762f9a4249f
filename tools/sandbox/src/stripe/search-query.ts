/**
 * Stripe's search query language, for PaymentIntents: clauses `field:value` (or `~` substring, and
 * `> < >= <=` on numbers), `metadata['key']:'value'` (single or double quotes), negation with a leading
 * `-`, joined by `AND` or by `OR` (never both in one query, as Stripe requires), at most 10 clauses.
 * Searchable fields are the ones Stripe documents for PaymentIntents: amount, created, currency, customer,
 * metadata, status.
 */
import { StripeApiError, StripeErrorType } from './stripe-error.js';
import type { PaymentIntent } from './stripe-objects.js';

type Operator = ':' | '~' | '>' | '<' | '>=' | '<=';

interface Clause {
  readonly negated: boolean;
  readonly field: string;
  readonly metadataKey: string | undefined;
  readonly operator: Operator;
  readonly value: string | number | null;
}

export interface SearchQuery {
  readonly clauses: readonly Clause[];
  readonly join: 'AND' | 'OR';
}

const FIELDS = ['amount', 'created', 'currency', 'customer', 'metadata', 'status'] as const;
const NUMERIC_FIELDS = ['amount', 'created'];
/** Why 10: Stripe's documented maximum number of clauses in one query. */
const MAX_CLAUSES = 10;

function parseError(detail: string): StripeApiError {
  return new StripeApiError(
    400,
    StripeErrorType.INVALID_REQUEST,
    `We were unable to parse your search query (${detail}). Try using the format \`metadata["key"]:"value"\` to ` +
      'query for metadata or `key:"value"` to query for attributes.',
    { param: 'query', saved: false },
  );
}

export function parseSearchQuery(text: string): SearchQuery {
  const s = text.trim();
  let i = 0;
  const skipSpace = () => {
    while (i < s.length && /\s/.test(s[i] ?? '')) i++;
  };
  const readQuoted = (): string => {
    const quote = s[i];
    if (quote !== "'" && quote !== '"') throw parseError(`expected a quoted string at ${i}`);
    i++;
    let out = '';
    while (i < s.length && s[i] !== quote) {
      if (s[i] === '\\' && i + 1 < s.length) i++;
      out += s[i];
      i++;
    }
    if (s[i] !== quote) throw parseError('unterminated string');
    i++;
    return out;
  };
  const clauses: Clause[] = [];
  const joins = new Set<'AND' | 'OR'>();
  if (s === '') throw parseError('empty query');
  while (i < s.length) {
    skipSpace();
    const negated = s[i] === '-';
    if (negated) i++;
    const fieldMatch = /^[a-z_]+/.exec(s.slice(i));
    if (fieldMatch === null) throw parseError(`expected a field at ${i}`);
    const field = fieldMatch[0];
    i += field.length;
    if (!(FIELDS as readonly string[]).includes(field)) {
      throw new StripeApiError(
        400,
        StripeErrorType.INVALID_REQUEST,
        `Field \`${field}\` is an unsupported search field for resource \`payment_intents\`. See ` +
          'https://stripe.com/docs/search#query-fields-for-payment-intents for a list of supported fields.',
        { param: 'query', saved: false },
      );
    }
    let metadataKey: string | undefined;
    if (field === 'metadata') {
      if (s[i] !== '[') throw parseError('metadata needs a key: metadata["key"]');
      i++;
      metadataKey = readQuoted();
      if (s[i] !== ']') throw parseError('expected ]');
      i++;
    }
    const opMatch = /^(>=|<=|:|~|>|<)/.exec(s.slice(i));
    if (opMatch === null) throw parseError(`expected an operator at ${i}`);
    const operator = opMatch[0] as Operator;
    i += operator.length;
    let value: string | number | null;
    if (s[i] === "'" || s[i] === '"') value = readQuoted();
    else {
      const bare = /^[^\s]+/.exec(s.slice(i))?.[0] ?? '';
      i += bare.length;
      if (bare === 'null') value = null;
      else if (/^-?\d+$/.test(bare) && NUMERIC_FIELDS.includes(field)) value = Number(bare);
      else throw parseError(`string values must be quoted (${bare})`);
    }
    if (operator !== ':' && operator !== '~' && !NUMERIC_FIELDS.includes(field)) {
      throw parseError(`${operator} applies to numeric fields only`);
    }
    clauses.push({ negated, field, metadataKey, operator, value });
    skipSpace();
    if (i >= s.length) break;
    const joinMatch = /^(AND|OR)\s/.exec(s.slice(i));
    if (joinMatch === null) throw parseError(`expected AND or OR at ${i}`);
    joins.add(joinMatch[1] as 'AND' | 'OR');
    i += joinMatch[1]?.length ?? 0;
  }
  if (joins.size > 1) throw parseError('AND and OR cannot be combined in one query');
  if (clauses.length > MAX_CLAUSES) throw parseError(`at most ${MAX_CLAUSES} clauses`);
  return { clauses, join: joins.has('OR') ? 'OR' : 'AND' };
}

export function matchesSearch(query: SearchQuery, pi: PaymentIntent): boolean {
  const results = query.clauses.map((c) => matchesClause(c, pi) !== c.negated);
  return query.join === 'AND' ? results.every(Boolean) : results.some(Boolean);
}

function matchesClause(clause: Clause, pi: PaymentIntent): boolean {
  const actual = fieldValue(clause, pi);
  const { operator, value } = clause;
  if (value === null) return actual === null || actual === undefined;
  if (actual === null || actual === undefined) return false;
  switch (operator) {
    case ':':
      return String(actual) === String(value);
    case '~':
      return String(actual).includes(String(value));
    case '>':
      return Number(actual) > Number(value);
    case '<':
      return Number(actual) < Number(value);
    case '>=':
      return Number(actual) >= Number(value);
    case '<=':
      return Number(actual) <= Number(value);
    default: {
      const never: never = operator;
      throw new Error(`unknown operator ${String(never)}`);
    }
  }
}

function fieldValue(clause: Clause, pi: PaymentIntent): string | number | null | undefined {
  switch (clause.field) {
    case 'metadata':
      return pi.metadata[clause.metadataKey ?? ''];
    case 'amount':
      return pi.amount;
    case 'created':
      return pi.created;
    case 'currency':
      return pi.currency;
    case 'customer':
      return pi.customer;
    case 'status':
      return pi.status;
    default:
      return undefined;
  }
}
