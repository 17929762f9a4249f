import { createHash } from 'node:crypto';

/** Metadata key holding the harness's key on the object a call created (PaymentIntent, Refund). */
export const SAGA_KEY_METADATA = 'saga_key';

/** Why 40: Stripe's limit on the length of a metadata key. */
const METADATA_KEY_MAX = 40;

/** Calls that change an existing PaymentIntent and so leave a marker on it for their lookup. */
export type MarkerKind = 'capture' | 'refund' | 'cancel';

/**
 * The metadata key under which a call that changes an existing PaymentIntent records its own key:
 * `saga_<kind>_<sha256(key) in hex>`, cut to Stripe's 40 characters. One metadata entry per key (not one
 * shared `saga_refund_key`), so two refunds of one PaymentIntent never overwrite each other's marker; the
 * value is the full key, so a search by marker is exact.
 */
export function markerMetadataKey(kind: MarkerKind, key: string): string {
  const prefix = `saga_${kind}_`;
  const digest = createHash('sha256').update(key).digest('hex');
  return prefix + digest.slice(0, METADATA_KEY_MAX - prefix.length);
}

/** The key of the marker-setting POST that precedes the effect: distinct, since Stripe refuses one key on two endpoints. */
export function markerIdempotencyKey(key: string): string {
  return `${key}:marker`;
}
