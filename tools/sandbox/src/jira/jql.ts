/**
 * A subset of JQL, enough for lookups and queues: clauses `field = value`, `!=`, `~` (contains), `!~`,
 * `IN (…)`, `NOT IN (…)`, `IS [NOT] EMPTY`, `>`/`<`/`>=`/`<=` on dates; `AND`, `OR`, `NOT` and
 * parentheses; `ORDER BY field [ASC|DESC]`. Fields: project, key (issuekey), id, labels, status,
 * statusCategory, summary, text, issuetype (type), created, updated. Values are quoted ("…" or '…') or
 * bare words. A query with no restriction is refused, as `/search/jql` refuses unbounded queries.
 */
import { JiraApiError } from './jira-error.js';
import type { JiraIssue } from './jira-state.js';
import { STATUS_CATEGORIES, statusDef } from './workflow.js';

type Expr =
  | { readonly kind: 'and' | 'or'; readonly left: Expr; readonly right: Expr }
  | { readonly kind: 'not'; readonly inner: Expr }
  | {
      readonly kind: 'clause';
      readonly field: string;
      readonly op: string;
      readonly values: readonly (string | null)[];
    };

export interface JqlQuery {
  readonly where: Expr | undefined;
  readonly orderBy: readonly { readonly field: string; readonly desc: boolean }[];
}

const FIELDS: Record<string, string> = {
  project: 'project',
  key: 'key',
  issuekey: 'key',
  id: 'id',
  labels: 'labels',
  status: 'status',
  statuscategory: 'statusCategory',
  summary: 'summary',
  text: 'text',
  issuetype: 'issuetype',
  type: 'issuetype',
  created: 'created',
  createddate: 'created',
  updated: 'updated',
  updateddate: 'updated',
};

interface Token {
  readonly text: string;
  readonly quoted: boolean;
}

function jqlError(detail: string): JiraApiError {
  return new JiraApiError(400, [`Error in the JQL Query: ${detail}`]);
}

function tokenize(jql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < jql.length) {
    const c = jql[i] ?? '';
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"' || c === "'") {
      let out = '';
      i++;
      while (i < jql.length && jql[i] !== c) {
        if (jql[i] === '\\') i++;
        out += jql[i] ?? '';
        i++;
      }
      if (jql[i] !== c) throw jqlError(`The quoted string '${out}' has not been completed.`);
      i++;
      tokens.push({ text: out, quoted: true });
    } else if ('(),'.includes(c)) {
      tokens.push({ text: c, quoted: false });
      i++;
    } else {
      const op = /^(!=|!~|>=|<=|=|~|>|<)/.exec(jql.slice(i))?.[0];
      if (op !== undefined) {
        tokens.push({ text: op, quoted: false });
        i += op.length;
      } else {
        const word = /^[^\s(),=!~<>"']+/.exec(jql.slice(i))?.[0];
        if (word === undefined) throw jqlError(`The character '${c}' is a reserved JQL character.`);
        tokens.push({ text: word, quoted: false });
        i += word.length;
      }
    }
  }
  return tokens;
}

export function parseJql(jql: string, projectKeys: readonly string[]): JqlQuery {
  const tokens = tokenize(jql);
  let pos = 0;
  const peek = () => tokens[pos];
  const isWord = (word: string) => peek()?.quoted === false && peek()?.text.toUpperCase() === word;
  const next = (): Token => {
    const t = tokens[pos++];
    if (t === undefined) throw jqlError('Expecting more input at the end of the query.');
    return t;
  };
  const value = (): string | null => {
    const t = next();
    if (!t.quoted && ['EMPTY', 'NULL'].includes(t.text.toUpperCase())) return null;
    return t.text;
  };

  const clause = (): Expr => {
    const fieldToken = next();
    const field = FIELDS[fieldToken.text.toLowerCase()];
    if (field === undefined) {
      throw new JiraApiError(400, [
        `Field '${fieldToken.text}' does not exist or you do not have permission to view it.`,
      ]);
    }
    let op: string;
    let values: (string | null)[];
    if (isWord('IS')) {
      pos++;
      const negate = isWord('NOT');
      if (negate) pos++;
      if (!isWord('EMPTY') && !isWord('NULL')) throw jqlError(`Expecting EMPTY after IS.`);
      pos++;
      op = negate ? '!=' : '=';
      values = [null];
    } else if (isWord('IN') || isWord('NOT')) {
      const negate = isWord('NOT');
      pos++;
      if (negate) {
        if (!isWord('IN')) throw jqlError(`Expecting IN after NOT.`);
        pos++;
      }
      if (next().text !== '(') throw jqlError('Expecting ( after IN.');
      values = [value()];
      while (peek()?.text === ',') {
        pos++;
        values.push(value());
      }
      if (next().text !== ')') throw jqlError('Expecting ) to close the list.');
      op = negate ? 'not in' : 'in';
    } else {
      op = next().text;
      if (!['=', '!=', '~', '!~', '>', '<', '>=', '<='].includes(op))
        throw jqlError(`Expecting an operator, got '${op}'.`);
      values = [value()];
    }
    if (field === 'project') {
      for (const v of values) {
        if (v !== null && !projectKeys.includes(v.toUpperCase())) {
          throw new JiraApiError(400, [`The value '${v}' does not exist for the field 'project'.`]);
        }
      }
    }
    return { kind: 'clause', field, op, values };
  };

  const unary = (): Expr => {
    if (isWord('NOT')) {
      pos++;
      return { kind: 'not', inner: unary() };
    }
    if (peek()?.text === '(' && peek()?.quoted === false) {
      pos++;
      const inner = or();
      if (next().text !== ')') throw jqlError('Expecting ).');
      return inner;
    }
    return clause();
  };
  const and = (): Expr => {
    let left = unary();
    while (isWord('AND')) {
      pos++;
      left = { kind: 'and', left, right: unary() };
    }
    return left;
  };
  const or = (): Expr => {
    let left = and();
    while (isWord('OR')) {
      pos++;
      left = { kind: 'or', left, right: and() };
    }
    return left;
  };

  const where = pos < tokens.length && !isWord('ORDER') ? or() : undefined;
  const orderBy: { field: string; desc: boolean }[] = [];
  if (isWord('ORDER')) {
    pos++;
    if (!isWord('BY')) throw jqlError('Expecting BY after ORDER.');
    pos++;
    do {
      if (peek()?.text === ',') pos++;
      const field = FIELDS[next().text.toLowerCase()];
      if (field === undefined) throw jqlError('Expecting a field to order by.');
      let desc = false;
      if (isWord('ASC') || isWord('DESC')) desc = next().text.toUpperCase() === 'DESC';
      orderBy.push({ field, desc });
    } while (peek()?.text === ',');
  }
  if (pos < tokens.length) throw jqlError(`Expecting either 'OR' or 'AND' but got '${peek()?.text ?? ''}'.`);
  if (where === undefined) {
    throw new JiraApiError(400, [
      'Unbounded JQL queries are not allowed here. Please add a search restriction to your query.',
    ]);
  }
  return { where, orderBy };
}

export function matchesJql(expr: Expr, issue: JiraIssue): boolean {
  switch (expr.kind) {
    case 'and':
      return matchesJql(expr.left, issue) && matchesJql(expr.right, issue);
    case 'or':
      return matchesJql(expr.left, issue) || matchesJql(expr.right, issue);
    case 'not':
      return !matchesJql(expr.inner, issue);
    case 'clause':
      return matchesClause(expr.field, expr.op, expr.values, issue);
    default: {
      const never: never = expr;
      throw new Error(`unknown expression ${JSON.stringify(never)}`);
    }
  }
}

/** The values a field holds on an issue (several for labels), compared case-insensitively except labels. */
function fieldValues(field: string, issue: JiraIssue): string[] {
  switch (field) {
    case 'project':
      return [issue.projectKey.toLowerCase()];
    case 'key':
      return [issue.key.toLowerCase()];
    case 'id':
      return [issue.id];
    case 'labels':
      return issue.labels;
    case 'status':
      return [issue.status.toLowerCase()];
    case 'statusCategory': {
      const key = statusDef(issue.status).category;
      return [key, STATUS_CATEGORIES[key].name.toLowerCase()];
    }
    case 'issuetype':
      return [issue.issueType.toLowerCase()];
    case 'summary':
      return [issue.summary.toLowerCase()];
    case 'text':
      return [`${issue.summary} ${JSON.stringify(issue.description ?? '')}`.toLowerCase()];
    case 'created':
      return [issue.created];
    case 'updated':
      return [issue.updated];
    default:
      return [];
  }
}

function matchesClause(
  field: string,
  op: string,
  values: readonly (string | null)[],
  issue: JiraIssue,
): boolean {
  const actual = fieldValues(field, issue);
  const norm = (v: string) => (field === 'labels' ? v : v.toLowerCase());
  const equals = (v: string | null) => (v === null ? actual.length === 0 : actual.includes(norm(v)));
  const contains = (v: string | null) => v !== null && actual.some((a) => a.includes(v.toLowerCase()));
  const dateCompare = (v: string | null, cmp: (a: number, b: number) => boolean) =>
    v !== null && actual.some((a) => cmp(Date.parse(a), Date.parse(v)));
  const v = values[0] ?? null;
  switch (op) {
    case '=':
      return equals(v);
    case '!=':
      return !equals(v);
    case 'in':
      return values.some(equals);
    case 'not in':
      return !values.some(equals);
    case '~':
      return contains(v);
    case '!~':
      return !contains(v);
    case '>':
      return dateCompare(v, (a, b) => a > b);
    case '<':
      return dateCompare(v, (a, b) => a < b);
    case '>=':
      return dateCompare(v, (a, b) => a >= b);
    case '<=':
      return dateCompare(v, (a, b) => a <= b);
    default:
      return false;
  }
}

/** Sorts by the query's ORDER BY, else by creation, newest first. */
export function sortIssues(issues: JiraIssue[], query: JqlQuery): JiraIssue[] {
  const order = query.orderBy.length > 0 ? query.orderBy : [{ field: 'created', desc: true }];
  const keyOf = (issue: JiraIssue, field: string): string | number =>
    field === 'key' || field === 'id' ? Number(issue.id) : (fieldValues(field, issue)[0] ?? '');
  return issues.sort((a, b) => {
    for (const { field, desc } of order) {
      const x = keyOf(a, field);
      const y = keyOf(b, field);
      if (x !== y) return (x < y ? -1 : 1) * (desc ? -1 : 1);
    }
    return (Number(a.id) - Number(b.id)) * -1;
  });
}
