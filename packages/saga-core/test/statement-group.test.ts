import { describe, expect, it } from 'vitest';
import { createStatementGroup, firstPerKey } from '@agent-saga/core';

describe('firstPerKey', () => {
  it('keeps the first item of each key, in the order they came', () => {
    const a1 = { key: 'a', n: 1 };
    const b1 = { key: 'b', n: 2 };
    const a2 = { key: 'a', n: 3 };
    const firsts = firstPerKey([a1, b1, a2], (i) => i.key);
    expect([...firsts.values()]).toEqual([a1, b1]);
    // The later item of a key is told apart by identity, as the grouped statements' callers do.
    expect(firsts.get(a2.key) === a2).toBe(false);
    expect(firsts.get(a1.key) === a1).toBe(true);
  });
});

describe('createStatementGroup', () => {
  it('sends the items submitted in one turn as one group, each resolved with its own result', async () => {
    const groups: number[][] = [];
    const group = createStatementGroup<number, number>({
      maxSize: 10,
      run: (items) => {
        groups.push([...items]);
        return Promise.resolve(items.map((i) => i * 10));
      },
    });
    const out = await Promise.all([1, 2, 3].map((i) => group.submit(i)));
    expect(out).toEqual([10, 20, 30]);
    expect(groups).toEqual([[1, 2, 3]]);
  });

  it('runs each item alone when its group fails, so only the item that fails by itself rejects', async () => {
    const group = createStatementGroup<number, number>({
      maxSize: 10,
      run: (items) => (items.includes(2) ? Promise.reject(new Error('bad 2')) : Promise.resolve([...items])),
    });
    const out = await Promise.allSettled([1, 2, 3].map((i) => group.submit(i)));
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});
