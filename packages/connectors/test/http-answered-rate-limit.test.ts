/**
 * What a plain-`fetch` connector (Jira, Resend, shipping) keeps of an answered failure, so that core's lookup
 * rule can drop the commit horizon for an attempt answered 429 and only for it: the status, the attempt
 * that got the answer (from the tool's context) and the vendor's `Retry-After`. Against a real HTTP server
 * on a free port.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { classifyToolError, StepStatus } from '@agent-saga/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseRetryAfter } from '../src/http/retry-after.js';
import { sendHttpRequest, type HttpCall } from '../src/http/send-http-request.js';

/** Answers `/<status>` with that status, a Jira-shaped error body and the `retry-after` of its query. */
let server: Server;
let baseUrl: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const status = Number(url.pathname.slice(1));
    const retryAfter = url.searchParams.get('retryAfter');
    res.writeHead(status, {
      'content-type': 'application/json',
      ...(retryAfter !== null ? { 'retry-after': retryAfter } : {}),
    });
    res.end(JSON.stringify({ errorMessages: ['Too many requests'], errors: {} }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** Sends one POST to `/<status>` and returns the stored error the executor would write. */
async function storedErrorOf(status: number, call: HttpCall, retryAfter?: string) {
  const err = await sendHttpRequest(
    { vendor: 'jira', baseUrl, authorization: 'Basic x' },
    {
      method: 'POST',
      path: `/${status}`,
      query: { retryAfter },
      body: {},
      answer: z.unknown(),
      call,
    },
  ).then(
    () => undefined,
    (e: unknown) => e,
  );
  return classifyToolError(err);
}

const signal = () => AbortSignal.timeout(5_000);

describe('an answered failure of a tool call', () => {
  it('keeps the 429, the attempt it answered and the Retry-After in seconds', async () => {
    const outcome = await storedErrorOf(429, { signal: signal(), attempt: 3 }, '2');
    expect(outcome).toMatchObject({
      status: StepStatus.UNKNOWN,
      error: { code: 'OUTCOME_UNKNOWN', status: 429, attempt: 3, retryAfterMs: 2_000 },
    });
  });

  it('keeps the attempt of a 503 too (the rule, not the connector, decides that a 5xx keeps the horizon)', async () => {
    const outcome = await storedErrorOf(503, { signal: signal(), attempt: 1 });
    expect(outcome.error).toMatchObject({ status: 503, attempt: 1 });
    expect(outcome.error.retryAfterMs).toBeUndefined();
  });

  it('stamps no attempt on a lookup’s request (its context has none)', async () => {
    const outcome = await storedErrorOf(429, { signal: signal() }, '1');
    expect(outcome.error).toMatchObject({ status: 429, retryAfterMs: 1_000 });
    expect(outcome.error.attempt).toBeUndefined();
  });

  it('stamps no attempt and no status when nothing answered (a refused connection)', async () => {
    const err = await sendHttpRequest(
      { vendor: 'jira', baseUrl: 'http://127.0.0.1:1', authorization: 'Basic x' },
      { method: 'POST', path: '/', body: {}, answer: z.unknown(), call: { signal: signal(), attempt: 2 } },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    const outcome = classifyToolError(err);
    expect(outcome.status).toBe(StepStatus.UNKNOWN);
    expect(outcome.error.status).toBeUndefined();
    expect(outcome.error.attempt).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-12-02T05:00:00Z');
  it.each([
    ['1', 1_000],
    [' 120 ', 120_000],
    ['0', 0],
    ['Wed, 02 Dec 2026 05:00:30 GMT', 30_000],
    // A date already past asks for no wait; one absurdly far off is capped at an hour.
    ['Wed, 02 Dec 2026 04:59:00 GMT', 0],
    ['999999', 3_600_000],
  ])('%j is %i ms', (header, ms) => {
    expect(parseRetryAfter(header, now)).toBe(ms);
  });

  it.each([null, '', 'soon', '-5', '1.5'])('%j is nothing to honour', (header) => {
    expect(parseRetryAfter(header, now)).toBeUndefined();
  });
});
