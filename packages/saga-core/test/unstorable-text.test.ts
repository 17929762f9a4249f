/**
 * findUnstorableText: the first string Postgres would refuse (a NUL, a lone surrogate), value or key, named
 * by its dotted path under the root, in the order the value's own keys are listed.
 */
import { describe, expect, it } from 'vitest';
import { findUnstorableText } from '@agent-saga/core';

const NUL = 'contains a NUL character (U+0000), which cannot be stored';
const LONE = 'contains an unpaired UTF-16 surrogate, which cannot be stored';

describe('findUnstorableText', () => {
  it('finds nothing in storable text, numbers, nulls and empty containers', () => {
    const body = { tool: 'charge', args: { a: [1, 'x', null, { b: true }], c: {} }, stepIdx: 0, e: '😀' };
    expect(findUnstorableText(body, '')).toBeNull();
    expect(findUnstorableText('plain', 'args')).toBeNull();
    expect(findUnstorableText(undefined, '')).toBeNull();
  });

  it('names a value by its path under the root, arrays by index', () => {
    expect(findUnstorableText({ args: { items: [{ sku: 'ok' }, { sku: 'a\u0000' }] } }, '')).toEqual({
      field: 'args.items.1.sku',
      reason: NUL,
    });
    expect(findUnstorableText({ items: ['ok', '\ud800'] }, 'args')).toEqual({
      field: 'args.items.1',
      reason: LONE,
    });
    expect(findUnstorableText('\u0000', 'args')).toEqual({ field: 'args', reason: NUL });
    expect(findUnstorableText('\u0000', '')).toEqual({ field: '', reason: NUL });
  });

  it('names a key that cannot be stored, before looking at its value', () => {
    expect(findUnstorableText({ a: { 'k\u0000': '\ud800' } }, 'args')).toEqual({
      field: 'args.a.k\u0000',
      reason: `its name ${NUL}`,
    });
  });

  it('answers the first in key order, and only own keys', () => {
    expect(findUnstorableText({ z: '\u0000', a: '\ud800' }, '')?.field).toBe('z');
    const inherited = Object.create({ bad: '\u0000' }) as Record<string, unknown>;
    inherited.good = 'fine';
    expect(findUnstorableText(inherited, '')).toBeNull();
  });
});
