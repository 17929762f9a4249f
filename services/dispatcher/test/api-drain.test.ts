import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, newRun, startApiHarness, type ApiHarness } from './api-harness.js';

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness('api_drain');
});
afterAll(async () => h?.close());

describe('shutdown', () => {
  it('answers a call waiting for its outcome at once (202) when the app closes', async () => {
    await newRun(h, 'drain');
    const pending = call(h, 'drain', {
      tool: 'create_note',
      args: { orderId: 'o', text: 't' },
      waitMs: 30_000,
    });
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    await h.app.close();
    const r = await pending;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(r).toMatchObject({ status: 202, body: { status: 'INTENDED', stepIdx: 0 } });
    expect(h.waiter().listening).toBe(false);
  });
});
