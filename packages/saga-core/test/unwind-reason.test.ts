import { describe, expect, it } from 'vitest';
import { unwindReasonOf } from '@agent-saga/core';

describe('unwindReasonOf', () => {
  it("reads back the words of whoever asked for the unwind, without requestUnwind's prefix", () => {
    expect(unwindReasonOf('unwind requested: the customer withdrew the request')).toBe(
      'the customer withdrew the request',
    );
  });

  it('keeps a reason written by another path as it stands, and has none for an empty one', () => {
    expect(unwindReasonOf('unwind: pivot 7 rejected by alice')).toBe('unwind: pivot 7 rejected by alice');
    expect(unwindReasonOf(null)).toBeNull();
    expect(unwindReasonOf('unwind requested:  ')).toBeNull();
  });
});
