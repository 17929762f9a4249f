/**
 * Compiles a fault's path pattern into a regular expression over the path (no query string): `*` matches
 * any run of characters (slashes included), `:name` exactly one non-empty segment, everything else itself.
 * So `/v1/payment_intents*` matches creation, retrieval and capture; `/rest/api/3/issue/:key/transitions`
 * matches one route.
 */
export function compilePathPattern(pattern: string): RegExp {
  let source = '';
  for (const token of pattern.split(/(\*|:[A-Za-z_][A-Za-z0-9_]*)/)) {
    if (token === '') continue;
    if (token === '*') source += '.*';
    else if (token.startsWith(':')) source += '[^/]+';
    else source += token.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}
