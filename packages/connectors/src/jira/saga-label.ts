/**
 * The label that carries the harness's key into Jira, which has no idempotency header: `saga-<key>`.
 * Our keys are 32 hex characters, so the label has no whitespace and stays far below Jira's 255-character
 * limit; a key that would break either rule is refused here rather than by Jira after a partial write.
 */
export function sagaLabel(key: string): string {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(key))
    throw new RangeError('an idempotency key must be 1–200 of [A-Za-z0-9_-]');
  return `saga-${key}`;
}

/** The JQL that finds every issue carrying the label of `key`. */
export function sagaLabelJql(key: string): string {
  return `labels = "${sagaLabel(key)}"`;
}
