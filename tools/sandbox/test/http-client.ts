/** A small fetch wrapper for tests: JSON in and out, the answer's status, headers and parsed body. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

export async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; json?: unknown; timeoutMs?: number } = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
    headers,
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
    signal: AbortSignal.timeout(init.timeoutMs ?? 5_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: parseBody(text, response.headers.get('content-type')),
  };
}

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

function parseBody(text: string, contentType: string | null): unknown {
  if (text === '') return undefined;
  return contentType?.includes('json') === true ? (JSON.parse(text) as unknown) : text;
}
