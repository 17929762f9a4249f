import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A Stripe-looking object id: prefix, underscore, 24 base62 characters (`pi_3Px…`). Random rather than
 * sequential so a test cannot come to depend on the order of ids.
 */
export function prefixedId(prefix: string, length = 24): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return `${prefix}_${out}`;
}

/** A UUID v4, as Resend uses for email ids. */
export function uuid(): string {
  return randomUUID();
}

/** Seconds since the epoch, the unit of Stripe's `created`. */
export function unixSeconds(ms: number = Date.now()): number {
  return Math.floor(ms / 1000);
}
