/**
 * An error answered in Jira's shape, `{ errorMessages: [...], errors: { field: message } }`: general
 * problems in `errorMessages`, per-field ones in `errors`.
 */
export class JiraApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errorMessages: readonly string[],
    readonly errors: Readonly<Record<string, string>> = {},
  ) {
    super(errorMessages[0] ?? Object.values(errors)[0] ?? `HTTP ${statusCode}`);
  }

  toBody(): { errorMessages: string[]; errors: Record<string, string> } {
    return { errorMessages: [...this.errorMessages], errors: { ...this.errors } };
  }
}

export function issueNotFound(): JiraApiError {
  return new JiraApiError(404, ['Issue does not exist or you do not have permission to see it.']);
}
