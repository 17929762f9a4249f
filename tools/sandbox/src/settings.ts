import { z } from 'zod';

/** The credentials each fake vendor accepts. */
export interface SandboxCredentials {
  /** Stripe secret key (Bearer, or Basic with the key as user name). */
  readonly stripeSecretKey: string;
  /** Jira Basic auth: account email and API token. */
  readonly jiraEmail: string;
  readonly jiraApiToken: string;
  /** Resend API key (Bearer). */
  readonly emailApiKey: string;
  /** Shipping API key (Bearer). */
  readonly shippingApiKey: string;
}

/** The credentials used when none are given; documented in docs/sandbox.md. */
export const DEFAULT_CREDENTIALS: SandboxCredentials = Object.freeze({
  stripeSecretKey: 'sk_test_sandbox',
  jiraEmail: 'agent@example.com',
  jiraApiToken: 'sandbox-jira-token',
  emailApiKey: 're_sandbox',
  shippingApiKey: 'ship_sandbox',
});

/** The body of `POST /__admin/config`: each setting optional, the rest kept. */
export const settingsPatchSchema = z
  .object({
    /** How long a new or changed PaymentIntent stays invisible to `/v1/payment_intents/search`. */
    stripeSearchLagMs: z.number().int().min(0).max(3_600_000),
    /** How long a new or changed Jira issue stays invisible to `/rest/api/3/search/jql`. */
    jiraSearchLagMs: z.number().int().min(0).max(3_600_000),
  })
  .partial()
  .strict();
export type SettingsPatch = z.infer<typeof settingsPatchSchema>;

/**
 * The settings a test may change while the sandbox runs. Mutable on purpose, and only through
 * `/__admin/config` (or `sandbox.admin.configure`); every search reads them at query time.
 */
export interface SandboxSettings {
  stripeSearchLagMs: number;
  jiraSearchLagMs: number;
}

/**
 * Why 2 s and 1 s by default: long enough that a lookup right after a write misses (as it would live, where
 * Stripe's search lags up to a minute and Jira's index seconds), short enough for tests that wait it out.
 */
export const DEFAULT_SETTINGS: Readonly<SandboxSettings> = Object.freeze({
  stripeSearchLagMs: 2_000,
  jiraSearchLagMs: 1_000,
});
