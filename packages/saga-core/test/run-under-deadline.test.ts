/**
 * runUnderDeadline: which signal cut a call off, and that a call leaves nothing behind on the caller's
 * process-lifetime shutdown signal (every executor and compensator call passes the same one).
 */
import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { runUnderDeadline, type AbortHandle } from '@agent-saga/core';

const never = () => new Promise<never>(() => {});

/** A full GC on demand, without starting the test process with --expose-gc. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('runUnderDeadline', () => {
  it('answers the value of a call that returns in time', async () => {
    const shutdown = new AbortController();
    const r = await runUnderDeadline(
      { timeoutMs: 1_000, timeoutError: () => new Error('late'), shutdownSignal: shutdown.signal },
      (abort) => Promise.resolve(abort.signal.aborted),
    );
    expect(r).toEqual({ ok: true, value: false });
  });

  it('cuts a hanging call off at its timeout, with the timeout error and reason', async () => {
    const shutdown = new AbortController();
    const r = await runUnderDeadline(
      { timeoutMs: 20, timeoutError: () => new Error('late'), shutdownSignal: shutdown.signal },
      never,
    );
    expect(r).toMatchObject({ ok: false, reason: 'timeout', error: new Error('late') });
  });

  it('aborts the signal given to the call on shutdown, with the shutdown reason', async () => {
    const shutdown = new AbortController();
    let seen: AbortSignal | undefined;
    const pending = runUnderDeadline(
      { timeoutMs: 10_000, timeoutError: () => new Error('late'), shutdownSignal: shutdown.signal },
      (abort) => ((seen = abort.signal), never()),
    );
    setTimeout(() => shutdown.abort(new Error('draining')), 10);
    const r = await pending;
    expect(r).toMatchObject({ ok: false, reason: 'shutdown', error: new Error('draining') });
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toEqual(new Error('draining'));
  });

  it('gives an already aborted signal to a call started after shutdown', async () => {
    const shutdown = new AbortController();
    shutdown.abort(new Error('draining'));
    const r = await runUnderDeadline(
      { timeoutMs: 10_000, timeoutError: () => new Error('late'), shutdownSignal: shutdown.signal },
      (abort) => Promise.resolve(abort.signal.aborted),
    );
    expect(r).toMatchObject({ ok: false, reason: 'shutdown' });
  });

  it('gives a call that reads its signal only after the deadline a signal already aborted by it', async () => {
    let handle: AbortHandle | undefined;
    const r = await runUnderDeadline(
      { timeoutMs: 10, timeoutError: () => new Error('late') },
      (abort) => ((handle = abort), never()),
    );
    expect(r).toMatchObject({ ok: false, reason: 'timeout', error: new Error('late') });
    expect(handle?.signal.aborted).toBe(true);
    expect(handle?.signal.reason).toEqual(new Error('late'));
  });

  it('answers with the value of a call that ends first, and a throw of the call as not ok with no reason', async () => {
    const deadline = { timeoutMs: 1_000, timeoutError: () => new Error('late') };
    await expect(runUnderDeadline(deadline, () => Promise.resolve(7))).resolves.toEqual({
      ok: true,
      value: 7,
    });
    await expect(
      runUnderDeadline(deadline, () => {
        throw new Error('thrown before any promise');
      }),
    ).resolves.toEqual({ ok: false, error: new Error('thrown before any promise'), reason: undefined });
  });

  it('puts one listener on the shutdown signal however many calls run, ended whichever way', async () => {
    const shutdown = new AbortController();
    const deadline = {
      timeoutMs: 20,
      timeoutError: () => new Error('late'),
      shutdownSignal: shutdown.signal,
    };
    await Promise.all([
      runUnderDeadline(deadline, () => Promise.resolve(1)),
      runUnderDeadline(deadline, () => Promise.reject(new Error('no'))),
      runUnderDeadline(deadline, never),
    ]);
    for (let i = 0; i < 50; i++) await runUnderDeadline(deadline, () => Promise.resolve(i));
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
    // The calls that ended are not cut again by a later shutdown; one still under way is.
    const running = runUnderDeadline({ ...deadline, timeoutMs: 10_000 }, never);
    shutdown.abort(new Error('draining'));
    await expect(running).resolves.toMatchObject({ ok: false, reason: 'shutdown' });
  });

  it('keeps nothing of an ended call alive through the shutdown signal', async () => {
    const shutdown = new AbortController();
    const deadline = {
      timeoutMs: 1_000,
      timeoutError: () => new Error('late'),
      shutdownSignal: shutdown.signal,
    };
    const given: WeakRef<AbortSignal>[] = [];
    for (let i = 0; i < 20; i++)
      await runUnderDeadline(deadline, (abort) =>
        Promise.resolve(void given.push(new WeakRef(abort.signal))),
      );
    // WeakRef targets are held until the current job ends: collect from a later turn.
    await new Promise((r) => setTimeout(r, 0));
    collectGarbage();
    expect(given.filter((r) => r.deref() !== undefined)).toHaveLength(0);
  });
});
