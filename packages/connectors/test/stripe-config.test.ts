import { ConfigError } from '@agent-saga/core';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_STRIPE_LOOKUP_LAG_MS,
  DEFAULT_STRIPE_TIMEOUT_MS,
  stripeConfigFromEnv,
} from '../src/index.js';

describe('stripeConfigFromEnv', () => {
  it('defaults to the real API, a 60 s lookup lag and the default timeout', () => {
    const config = stripeConfigFromEnv({ STRIPE_SECRET_KEY: 'sk_test_x' });
    expect(config).toMatchObject({
      apiBase: null,
      lookupLagMs: DEFAULT_STRIPE_LOOKUP_LAG_MS,
      timeoutMs: DEFAULT_STRIPE_TIMEOUT_MS,
    });
    expect(DEFAULT_STRIPE_LOOKUP_LAG_MS).toBe(60_000);
    expect(config.secretKey).toBe('sk_test_x');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('splits STRIPE_API_BASE into protocol, host and port for the client', () => {
    const config = stripeConfigFromEnv({
      STRIPE_SECRET_KEY: 'sk_test_x',
      STRIPE_API_BASE: 'http://127.0.0.1:12111',
      STRIPE_LOOKUP_LAG_MS: '1500',
      STRIPE_TIMEOUT_MS: '8000',
    });
    expect(config.apiBase).toEqual({ protocol: 'http', host: '127.0.0.1', port: 12111 });
    expect(config).toMatchObject({ lookupLagMs: 1_500, timeoutMs: 8_000 });
    expect(
      stripeConfigFromEnv({ STRIPE_SECRET_KEY: 'k', STRIPE_API_BASE: 'https://stripe.internal' }).apiBase,
    ).toEqual({ protocol: 'https', host: 'stripe.internal', port: 443 });
  });

  it('never lets the secret key reach a log or a JSON dump', () => {
    const config = stripeConfigFromEnv({ STRIPE_SECRET_KEY: 'sk_live_secret' });
    expect(JSON.stringify(config)).not.toContain('sk_live_secret');
    expect(Object.keys(config)).not.toContain('secretKey');
  });

  it('fails naming the variable, without echoing the key', () => {
    expect(() => stripeConfigFromEnv({})).toThrow(ConfigError);
    expect(() => stripeConfigFromEnv({})).toThrow(/STRIPE_SECRET_KEY/);
    expect(() => stripeConfigFromEnv({ STRIPE_SECRET_KEY: 'k', STRIPE_API_BASE: 'ftp://x' })).toThrow(
      /STRIPE_API_BASE/,
    );
    expect(() =>
      stripeConfigFromEnv({ STRIPE_SECRET_KEY: 'k', STRIPE_API_BASE: 'http://127.0.0.1:1/v1' }),
    ).toThrow(/STRIPE_API_BASE/);
    expect(() => stripeConfigFromEnv({ STRIPE_SECRET_KEY: 'sk_x', STRIPE_LOOKUP_LAG_MS: 'soon' })).toThrow(
      /STRIPE_LOOKUP_LAG_MS/,
    );
    let message = '';
    try {
      stripeConfigFromEnv({ STRIPE_SECRET_KEY: 'sk_live_secret', STRIPE_TIMEOUT_MS: '0' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/STRIPE_TIMEOUT_MS/);
    expect(message).not.toContain('sk_live_secret');
  });
});
