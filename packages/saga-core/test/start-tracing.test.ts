import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { startTraceSpan, startTracing } from '../src/index.js';

/** A stand-in OTLP/HTTP collector: records each request's method, path and body size. */
const received: { method: string; url: string; bytes: number; type: string }[] = [];
const collector = createServer((req: IncomingMessage, res) => {
  let bytes = 0;
  req.on('data', (c: Buffer) => (bytes += c.length));
  req.on('end', () => {
    received.push({
      method: req.method ?? '',
      url: req.url ?? '',
      bytes,
      type: String(req.headers['content-type']),
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});

afterAll(async () => {
  trace.disable();
  await new Promise<void>((r) => collector.close(() => r()));
});

describe('startTracing with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('exports recorded spans over OTLP/HTTP to <endpoint>/v1/traces, with the ids the harness stores', async () => {
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', () => r()));
    const port = (collector.address() as AddressInfo).port;
    const tracing = await startTracing('test', { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}/` });
    expect(tracing.exporting).toBe(true);
    const parent = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', flags: 1 };
    const span = startTraceSpan('saga.test', parent, 'client');
    expect(span.context.traceId).toBe(parent.traceId);
    expect(span.traceparent).toBe(`00-${parent.traceId}-${span.context.spanId}-01`);
    expect(received).toEqual([]);
    span.end();
    await tracing.shutdown();
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'POST', url: '/v1/traces' });
    expect(received[0]!.bytes).toBeGreaterThan(0);
  });
});
