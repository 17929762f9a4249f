import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on a free port that answers like the dispatcher would, from canned answers. The
 * client under test talks to it over the network with its real fetch; no mocks.
 */
export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body, or undefined when there was none. */
  readonly body: unknown;
}

/** A canned answer: JSON `body`, or a `raw` text body, or `hangUp` to drop the connection unanswered. */
export type Answer =
  { readonly status: number; readonly body?: unknown; readonly raw?: string } | { readonly hangUp: true };

export interface FakeDispatcher {
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakeDispatcher(answer: (req: RecordedRequest) => Answer): Promise<FakeDispatcher> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: text === '' ? undefined : (JSON.parse(text) as unknown),
      };
      requests.push(recorded);
      const a = answer(recorded);
      if ('hangUp' in a) {
        req.socket.destroy();
        return;
      }
      if (a.raw !== undefined) {
        res.writeHead(a.status, { 'content-type': 'text/html' }).end(a.raw);
        return;
      }
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body ?? null));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => {
      // Idempotent, so that a test may stop the server early and the file's afterEach still runs.
      closing ??= new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      });
      return closing;
    },
  };
}

/** Answers in order, one per request; a request beyond the script is a test bug and answers 599. */
export function scripted(...answers: Answer[]): (req: RecordedRequest) => Answer {
  return () => answers.shift() ?? { status: 599, body: { error: { code: 'SCRIPT', message: 'no answer' } } };
}

/** A CONFIRMED answer for `stepIdx`, shaped as the dispatcher sends it. */
export function confirmed(stepIdx: number, extra: Record<string, unknown> = {}): Answer {
  return {
    status: 200,
    body: {
      status: 'CONFIRMED',
      stepIdx,
      idempotencyKey: `key-${stepIdx}`,
      externalRef: `REF-${stepIdx}`,
      result: { ok: true },
      replayed: false,
      ...extra,
    },
  };
}

/** An error answer in the dispatcher's `{ error: { code, message, ... } }` shape. */
export function apiError(status: number, code: string, extra: Record<string, unknown> = {}): Answer {
  return { status, body: { error: { code, message: `${code} (canned)`, ...extra } } };
}

/** A step of `GET /v1/runs/{runId}` with the given index, tool and status. */
export function stepView(stepIdx: number, tool: string, status: string): Record<string, unknown> {
  return {
    stepIdx,
    tool,
    toolClass: 'compensatable',
    status,
    idempotencyKey: `key-${stepIdx}`,
    args: {},
    externalRef: null,
    result: null,
    error: null,
    compensation: null,
    compensationStatus: null,
    audience: ['agent'],
    attempts: 1,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  };
}

/** A `GET /v1/runs/{runId}` answer holding `steps`. */
export function runView(runId: string, steps: readonly Record<string, unknown>[]): Answer {
  return {
    status: 200,
    body: { runId, status: 'RUNNING', statusReason: null, cursor: 0, steps },
  };
}
