import {
  ClientError,
  classifyToolError,
  createToolRegistry,
  OutcomeUnknownError,
  parseArgs,
  StepStatus,
  type AnyTool,
} from '@agent-saga/core';
import { startSandbox, type RunningSandbox } from '@agent-saga/sandbox';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createShippingTools, VendorIdempotencyMismatchError, shippingConfigFromEnv } from '../src/index.js';
import { rejectionOf, sleep, stepContext, toolNamed } from './support/http-connector-kit.js';

let sandbox: RunningSandbox;
let tools: readonly AnyTool[];

const tool = (name: string) => toolNamed(tools, name);
const shipments = () => sandbox.admin.ledger().shipping.shipments;
const call = (name: string, args: unknown, ctx = stepContext(name)) =>
  tool(name).execute(parseArgs(tool(name), args), ctx) as Promise<{
    externalRef: string | null;
    result: Record<string, unknown>;
  }>;
const reshipArgs = { orderId: '1183', items: [{ sku: 'TEE-L', quantity: 1 }], reason: 'lost in transit' };

beforeAll(async () => {
  sandbox = await startSandbox();
  tools = createShippingTools(
    shippingConfigFromEnv({
      SHIPPING_API_BASE: sandbox.urls.shipping,
      SHIPPING_API_KEY: sandbox.credentials.shippingApiKey,
    }),
  );
});
afterAll(async () => sandbox?.close());
beforeEach(() => sandbox.admin.reset());

describe('shipping connector against the sandbox', () => {
  it('registers with the core registry; reship is compensated by cancel_shipment', () => {
    const registry = createToolRegistry(tools);
    expect(registry.require('reship').compensate?.(reshipArgs, 'k1')).toEqual({
      tool: 'cancel_shipment',
      args: { shipment: { $ref: 'k1' } },
    });
    expect(registry.require('reship').lookupLagMs).toBe(0);
    expect(registry.require('get_order').class).toBe('pure');
  });

  it('get_order reads an order; an unknown one is a ClientError (404)', async () => {
    expect((await call('get_order', { orderId: '1183' })).result).toMatchObject({
      id: '1183',
      eligibleForReship: true,
    });
    const err = await rejectionOf(call('get_order', { orderId: 'nope' }));
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).details).toMatchObject({ status: 404, vendorCode: 'not_found' });
  });

  it('reship: one shipment, created with the harness key as Idempotency-Key', async () => {
    const ctx = stepContext('reship');
    const effect = await call('reship', reshipArgs, ctx);
    expect(shipments()).toEqual([
      expect.objectContaining({
        id: effect.externalRef,
        status: 'created',
        idempotencyKey: ctx.idempotencyKey,
      }),
    ]);
    const post = sandbox.admin.requests().find((r) => r.method === 'POST' && r.path === '/v1/shipments');
    expect(post?.idempotencyKey).toBe(ctx.idempotencyKey);
    expect(await tool('reship').lookup!(ctx.idempotencyKey, ctx)).toMatchObject({
      externalRef: effect.externalRef,
    });
  });

  it('504 after commit: unknown; lookup finds it at once; a same-key retry replays (one shipment)', async () => {
    sandbox.admin.addFault({
      vendor: 'shipping',
      method: 'POST',
      path: '/v1/shipments',
      nth: 1,
      kind: 'error_after',
    });
    const ctx = stepContext('reship');
    const err = await rejectionOf(call('reship', reshipArgs, ctx));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err).toMatchObject({ status: 504 });
    expect(classifyToolError(err)).toMatchObject({ status: StepStatus.UNKNOWN, error: { status: 504 } });
    expect(shipments()).toHaveLength(1);

    expect(await tool('reship').lookup!(ctx.idempotencyKey, ctx)).toMatchObject({
      externalRef: shipments()[0]!.id,
    });
    const retry = await call('reship', reshipArgs, ctx);
    expect(retry.externalRef).toBe(shipments()[0]!.id);
    expect(shipments()).toHaveLength(1);
    expect(sandbox.admin.requests().filter((r) => r.replayed)).toHaveLength(1);
  });

  it('a reset after commit is unknown and names the socket error', async () => {
    sandbox.admin.addFault({
      vendor: 'shipping',
      method: 'POST',
      path: '/v1/shipments',
      nth: 1,
      kind: 'reset_after',
    });
    const err = await rejectionOf(call('reship', reshipArgs));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((err as { vendorCode?: string }).vendorCode).toMatch(/ECONNRESET|UND_ERR_SOCKET|EPIPE/);
    expect(shipments()).toHaveLength(1);
  });

  it('a dropped request is unknown, and the lookup proves it did nothing', async () => {
    sandbox.admin.addFault({
      vendor: 'shipping',
      method: 'POST',
      path: '/v1/shipments',
      nth: 1,
      kind: 'drop',
    });
    const ctx = stepContext('reship');
    expect(await rejectionOf(call('reship', reshipArgs, ctx))).toBeInstanceOf(OutcomeUnknownError);
    expect(await tool('reship').lookup!(ctx.idempotencyKey, ctx)).toBeNull();
  });

  it('422 order_not_eligible is a ClientError, and stays one when replayed under the key', async () => {
    const ctx = stepContext('reship');
    const args = { orderId: '1182', items: [{ sku: 'MUG-BLUE', quantity: 1 }], reason: 'broken' };
    for (let i = 0; i < 2; i++) {
      const err = await rejectionOf(call('reship', args, ctx));
      expect(err).toBeInstanceOf(ClientError);
      expect((err as ClientError).details).toMatchObject({ status: 422, vendorCode: 'order_not_eligible' });
      expect(classifyToolError(err).status).toBe(StepStatus.FAILED);
    }
    expect(shipments()).toEqual([]);
  });

  it('same key, other body → VENDOR_IDEMPOTENCY_MISMATCH (unknown, never a ClientError)', async () => {
    const ctx = stepContext('reship');
    await call('reship', reshipArgs, ctx);
    const err = await rejectionOf(call('reship', { ...reshipArgs, reason: 'reworded' }, ctx));
    expect(err).toBeInstanceOf(VendorIdempotencyMismatchError);
    expect(err).not.toBeInstanceOf(ClientError);
    expect(classifyToolError(err)).toMatchObject({
      status: StepStatus.UNKNOWN,
      error: { code: 'VENDOR_IDEMPOTENCY_MISMATCH', status: 409, vendorCode: 'idempotency_key_mismatch' },
    });
    expect(shipments()).toHaveLength(1);
  });

  it('in flight: a timed-out first send and a same-key send meanwhile are unknown; later, one shipment', async () => {
    sandbox.admin.addFault({
      vendor: 'shipping',
      method: 'POST',
      path: '/v1/shipments',
      nth: 1,
      kind: 'delay',
      delayMs: 800,
      phase: 'during_processing',
    });
    const runId = 'run-in-flight';
    const first = await rejectionOf(
      call('reship', reshipArgs, stepContext('reship', { runId, signal: AbortSignal.timeout(150) })),
    );
    expect(first).toBeInstanceOf(OutcomeUnknownError);
    expect(first).toMatchObject({ vendorCode: 'timeout' });

    const second = await rejectionOf(call('reship', reshipArgs, stepContext('reship', { runId })));
    expect(second).toBeInstanceOf(OutcomeUnknownError);
    expect(second).toMatchObject({ status: 409, vendorCode: 'idempotency_key_in_use' });

    await sleep(1_000);
    const ctx = stepContext('reship', { runId });
    expect(await tool('reship').lookup!(ctx.idempotencyKey, ctx)).not.toBeNull();
    await call('reship', reshipArgs, ctx);
    expect(shipments()).toHaveLength(1);
  });

  it('cancel_shipment cancels, and a re-send answers the same canceled shipment', async () => {
    const created = await call('reship', reshipArgs);
    const ctx = stepContext('cancel_shipment', { args: { shipment: created.externalRef } });
    // The cancel carries no key the API keeps: the lookup reads the shipment's state instead.
    expect(await tool('cancel_shipment').lookup!(ctx.idempotencyKey, ctx)).toBeNull();
    for (let i = 0; i < 2; i++) {
      const effect = await call('cancel_shipment', { shipment: created.externalRef }, ctx);
      expect(effect).toMatchObject({ externalRef: created.externalRef, result: { status: 'canceled' } });
    }
    expect(shipments()).toEqual([expect.objectContaining({ status: 'canceled' })]);
    const cancels = sandbox.admin.requests().filter((r) => r.path.endsWith('/cancel'));
    expect(cancels.every((r) => r.idempotencyKey === ctx.idempotencyKey)).toBe(true);
    expect(await tool('cancel_shipment').lookup!(ctx.idempotencyKey, ctx)).toMatchObject({
      externalRef: created.externalRef,
      result: { status: 'canceled' },
    });
  });
});
