import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { unseenOutcomeSchema } from './call-outcome.js';
import {
  LocalErrorCode,
  ServiceUnavailableError,
  UnexpectedResponseError,
  errorClassFor,
  type SagaApiError,
} from './errors.js';
import type { SendRequest } from './send-request.js';

/** Where and as whom requests go; compiled once by `createSagaClient`. */
export interface Transport {
  readonly token: string;
  /** Sends to a path under the client's base URL, which keeps any path prefix (a reverse proxy's). */
  readonly send: SendRequest;
  /** How long a request that may be repeated is sent again while the dispatcher is unavailable (0: never). */
  readonly unavailableRetryMs: number;
}

export interface JsonRequest<S extends z.ZodType> {
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly path: string;
  readonly body?: unknown;
  /** The success statuses this endpoint may answer with; any other 2xx/3xx is unexpected. */
  readonly ok: readonly number[];
  readonly schema: S;
  /**
   * The request may be sent again after "no answer": a call (its `stepIdx` makes a repeat the same step,
   * which the dispatcher answers instead of acting twice). Every GET is. See {@link requestJson}.
   */
  readonly repeatable?: boolean;
}

/** First pause before a repeat, doubled each time up to {@link MAX_PAUSE_MS}. */
const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 2_000;

/** The dispatcher's error body: `{ error: { code, message, field?, fields?, outcome?, ... } }`. */
const errorBodySchema = z.object({
  error: z.looseObject({
    code: z.string().min(1),
    message: z.string(),
    field: z.string().optional(),
    fields: z.array(z.string()).optional(),
    outcome: unseenOutcomeSchema.optional(),
  }),
});

/**
 * Sends one JSON request and returns the validated body with its status, or throws the error family the
 * answer maps onto. A body that does not match `schema` is an {@link UnexpectedResponseError} naming
 * what was wrong, never a value cast to a type it does not have.
 *
 * A `repeatable` request (a call, any GET) that gets no answer (the connection refused or reset, a proxy's 5xx page, the
 * dispatcher's 503 while it drains) is sent again, with pauses from 100 ms doubling to 2 s, for up to the
 * transport's `unavailableRetryMs`; then the last {@link ServiceUnavailableError} is thrown. Why the client
 * does this rather than the agent: a dispatcher restarted or failed over mid-call resets every request it
 * held, and an agent shown that error tends to read it as done (`pnpm simulate`, docs/simulation.md: an
 * agent that took the reset of an API restart for success completed its run without the write). A call
 * carries its `stepIdx`, so its repeat is the same step: the dispatcher writes it if the first never
 * committed, and answers its outcome if it did. Nothing else is repeated (a run's creation, an approval,
 * a correction's send): their callers decide.
 */
export async function requestJson<S extends z.ZodType>(
  transport: Transport,
  req: JsonRequest<S>,
): Promise<{ readonly status: number; readonly data: z.infer<S> }> {
  const repeatable = req.repeatable ?? req.method === 'GET';
  if (!repeatable || transport.unavailableRetryMs <= 0) return requestOnce(transport, req);
  const giveUpAt = Date.now() + transport.unavailableRetryMs;
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(2 * pause, MAX_PAUSE_MS)) {
    try {
      return await requestOnce(transport, req);
    } catch (err) {
      if (!isUnavailable(err) || Date.now() + pause > giveUpAt) throw err;
      await sleep(pause);
    }
  }
}

/** No usable answer: nothing the dispatcher decided (a transport failure, a proxy's page, a 503 drain). */
function isUnavailable(err: unknown): boolean {
  return (
    err instanceof ServiceUnavailableError && (err.code === LocalErrorCode.UNAVAILABLE || err.status === 503)
  );
}

async function requestOnce<S extends z.ZodType>(
  transport: Transport,
  req: JsonRequest<S>,
): Promise<{ readonly status: number; readonly data: z.infer<S> }> {
  const what = `${req.method} ${req.path}`;
  const headers: Record<string, string> = {
    authorization: `Bearer ${transport.token}`,
    accept: 'application/json',
  };
  if (req.body !== undefined) headers['content-type'] = 'application/json';

  let res: { readonly status: number; readonly text: string };
  try {
    res = await transport.send(req.path, {
      method: req.method,
      headers,
      ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
    });
  } catch (cause) {
    throw new ServiceUnavailableError({
      code: LocalErrorCode.UNAVAILABLE,
      message: `${what}: no answer from the dispatcher (${describe(cause)})`,
      status: null,
      cause,
    });
  }

  const json = parseJson(res.text);
  if (req.ok.includes(res.status)) {
    const parsed = req.schema.safeParse(json.ok ? json.value : undefined);
    if (parsed.success) return { status: res.status, data: parsed.data };
    throw unexpected(what, res.status, json.ok ? z.prettifyError(parsed.error) : 'the body is not JSON');
  }
  throw errorFromAnswer(what, res.status, json);
}

function errorFromAnswer(
  what: string,
  status: number,
  json: { ok: true; value: unknown } | { ok: false },
): SagaApiError {
  const body = json.ok ? errorBodySchema.safeParse(json.value) : undefined;
  if (body?.success) {
    const { code, message, field, fields, outcome, ...details } = body.data.error;
    const ErrorClass = errorClassFor(status, code);
    return new ErrorClass({ code, message, status, field, fields, outcome, details });
  }
  // A 5xx from a proxy in front of the dispatcher is still "unavailable", whatever its body says.
  if (status >= 500) {
    return new ServiceUnavailableError({
      code: LocalErrorCode.UNAVAILABLE,
      message: `${what}: the dispatcher answered ${status}`,
      status,
    });
  }
  const why = !json.ok
    ? 'the body is not JSON'
    : body && !body.success
      ? `not a dispatcher error body: ${z.prettifyError(body.error)}`
      : 'unexpected status';
  return unexpected(what, status, why);
}

function unexpected(what: string, status: number, why: string): UnexpectedResponseError {
  return new UnexpectedResponseError({
    code: LocalErrorCode.UNEXPECTED_RESPONSE,
    message: `${what}: the dispatcher answered ${status} with a malformed body (${why})`,
    status,
  });
}

/**
 * `path?k=v&…` with the parameters that are set, so that an absent filter is absent on the wire (the
 * dispatcher's default applies) rather than sent as the string "undefined".
 */
export function withQuery(
  path: string,
  params: Readonly<Record<string, string | number | readonly string[] | undefined>>,
): string {
  const q = new URLSearchParams();
  // A list is the parameter repeated, as the dispatcher reads one (`whileStatus=A&whileStatus=B`).
  for (const [k, v] of Object.entries(params))
    if (typeof v === 'object') for (const item of v) q.append(k, item);
    else if (v !== undefined) q.set(k, String(v));
  const text = q.toString();
  return text === '' ? path : `${path}?${text}`;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function describe(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
    return `${cause.message}${inner}`;
  }
  return String(cause);
}
