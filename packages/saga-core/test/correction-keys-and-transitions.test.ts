import { describe, expect, it } from 'vitest';
import {
  allowedCorrectionSources,
  CORRECTION_TRANSITIONS,
  correctionSendKey,
  CorrectionStatus,
  stepKey,
  valuesOf,
} from '@agent-saga/core';

describe('correction send keys', () => {
  it('keep the key corrections had before versions for version 1, and give every edit its own', () => {
    expect(correctionSendKey('r', 2, 'send_email', 1)).toBe(stepKey('r', 2, 'correct:send_email'));
    const keys = [1, 2, 3].map((v) => correctionSendKey('r', 2, 'send_email', v));
    expect(new Set(keys).size).toBe(3);
    expect(correctionSendKey('r', 2, 'send_email', 2)).toBe(correctionSendKey('r', 2, 'send_email', 2));
    expect(() => correctionSendKey('r', 2, 'send_email', 0)).toThrow(RangeError);
  });
});

describe('correction transitions', () => {
  const all = valuesOf(CorrectionStatus);
  it('cover every status', () => {
    expect(Object.keys(CORRECTION_TRANSITIONS).sort()).toEqual([...all].sort());
  });
  it('never leave sent or dismissed', () => {
    for (const to of all) {
      expect(allowedCorrectionSources(to)).not.toContain(CorrectionStatus.SENT);
      expect(allowedCorrectionSources(to)).not.toContain(CorrectionStatus.DISMISSED);
    }
  });
  it('let a started send end only as sent, open (refused or proven absent) or unknown, never dismissed', () => {
    expect(allowedCorrectionSources(CorrectionStatus.DISMISSED)).toEqual([CorrectionStatus.OPEN]);
    expect(allowedCorrectionSources(CorrectionStatus.SENDING)).toEqual([CorrectionStatus.OPEN]);
    expect(allowedCorrectionSources(CorrectionStatus.UNKNOWN)).toEqual([CorrectionStatus.SENDING]);
  });
});
