import { describe, expect, it } from 'vitest';
import { compensationKey, correctionSendKey, stepKey } from '@agent-saga/core';
import {
  currentKeyNamespace,
  installKeyNamespace,
  keyNamespaceFingerprint,
} from '../src/steps/intent/key-namespace.js';
import { baseConfigSchema, parseConfig } from '../src/process/config.js';

/**
 * Keys computed by the derivation as it was before SAGA_KEY_NAMESPACE existed, for run `run-1`, step 0,
 * tool `create_ticket`: sha256 of the identity text, hex, first 32 characters. Literals, so a change of
 * the unset derivation cannot pass by changing the expectation with it.
 */
const TODAY = {
  step: '6bbba0d19f84868330d03f704aa7ce62',
  compensation: '6a5502d69846917de01577484782da9c',
  correction: '163f2d2a7017b0859ff84cf0d8e44ee9',
} as const;

/** Every key a deployment derives for run-1's step 0 under `ns`. */
const keysUnder = (ns: string | null) => [
  stepKey('run-1', 0, 'create_ticket', ns),
  compensationKey('run-1', 0, 'create_ticket', ns),
  // Correction keys go through stepKey with the process's namespace: checked below, once installed.
];

const env = { DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/x', REDIS_URL: 'redis://127.0.0.1:6379' };

describe('the key namespace', () => {
  it('unset: every key is byte-identical to the key derived before namespaces', () => {
    expect(currentKeyNamespace()).toBeNull();
    expect(parseConfig(baseConfigSchema, env).SAGA_KEY_NAMESPACE).toBeNull();
    expect(stepKey('run-1', 0, 'create_ticket')).toBe(TODAY.step);
    expect(stepKey('run-1', 0, 'create_ticket', null)).toBe(TODAY.step);
    expect(compensationKey('run-1', 0, 'create_ticket')).toBe(TODAY.compensation);
    expect(correctionSendKey('run-1', 0, 'create_ticket', 1)).toBe(TODAY.correction);
  });

  it('set: every key differs from the bare one and between namespaces, deterministically, in the same shape', () => {
    const bare = keysUnder(null);
    const staging = keysUnder('staging');
    const production = keysUnder('production');
    expect(keysUnder('staging')).toEqual(staging);
    for (let i = 0; i < bare.length; i++) {
      expect(new Set([bare[i], staging[i], production[i]]).size).toBe(3);
    }
    for (const key of [...staging, ...production]) {
      // What the vendors see keeps its shape: 32 hex characters (the Jira label `saga-<key>` and the email
      // tag stay within their limits), and the namespace is not in it.
      expect(key).toMatch(/^[0-9a-f]{32}$/);
      expect(key).not.toContain('staging');
    }
    // A namespace that looks like a prefix of the identity still gives an unrelated key.
    expect(stepKey('1', 0, 'create_ticket', 'run-')).not.toBe(stepKey('run-1', 0, 'create_ticket', null));
  });

  it('refuses an empty value or one with spaces, naming the variable', () => {
    expect(() => parseConfig(baseConfigSchema, { ...env, SAGA_KEY_NAMESPACE: '' })).toThrow(
      /SAGA_KEY_NAMESPACE/,
    );
    expect(() => parseConfig(baseConfigSchema, { ...env, SAGA_KEY_NAMESPACE: 'prod ' })).toThrow(
      /SAGA_KEY_NAMESPACE/,
    );
    expect(parseConfig(baseConfigSchema, { ...env, SAGA_KEY_NAMESPACE: 'prod-eu' }).SAGA_KEY_NAMESPACE).toBe(
      'prod-eu',
    );
  });

  it('installed once per process: every derived key follows it, and another value is refused', () => {
    installKeyNamespace('blue');
    installKeyNamespace('blue');
    expect(stepKey('run-1', 0, 'create_ticket')).toBe(stepKey('run-1', 0, 'create_ticket', 'blue'));
    expect(compensationKey('run-1', 0, 'create_ticket')).toBe(keysUnder('blue')[1]);
    const correction = correctionSendKey('run-1', 0, 'create_ticket', 1);
    expect(correction).not.toBe(TODAY.correction);
    expect(correction).toBe(stepKey('run-1', 0, 'correct:create_ticket', 'blue'));
    expect(() => installKeyNamespace('green')).toThrow(/already installed/);
    expect(() => installKeyNamespace(null)).toThrow(/already installed/);
    expect(keyNamespaceFingerprint('blue')).toMatch(/^[0-9a-f]{12}$/);
    expect(keyNamespaceFingerprint('blue')).not.toBe(keyNamespaceFingerprint('green'));
    expect(keyNamespaceFingerprint(null)).toBe('none');
  });
});
