import { parseConfig } from '@agent-saga/core';
import { z } from 'zod';

const shippingEnvSchema = z.object({
  /** Base of our warehouse API, e.g. `http://127.0.0.1:12114` in the sandbox. */
  SHIPPING_API_BASE: z.url(),
  /** Bearer key. */
  SHIPPING_API_KEY: z.string().min(1),
});

/** The shipping connector's settings, parsed once. `apiKey` is a secret: never log this object. */
export interface ShippingConfig {
  readonly apiBase: string;
  readonly apiKey: string;
}

/** Parses the shipping variables from `env`; a missing or bad one fails naming it (`ConfigError`). */
export function shippingConfigFromEnv(env: Record<string, string | undefined>): ShippingConfig {
  const e = parseConfig(shippingEnvSchema, env);
  return Object.freeze({ apiBase: e.SHIPPING_API_BASE.replace(/\/+$/, ''), apiKey: e.SHIPPING_API_KEY });
}
