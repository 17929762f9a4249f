import { sha256Hex } from './sha256-hex.js';

/**
 * JSON with object keys sorted at every depth, so equal values always give equal text. Used for payload
 * hashes: an approval binds to the hash of what will execute, not to how a model happened to order keys.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** sha256 of the canonical JSON of `{ tool, args }`, lowercase hex. */
export function payloadHash(tool: string, args: unknown): string {
  return sha256Hex(canonicalJson({ tool, args }));
}

/**
 * The hash an operator's send of a correction must carry: the command exactly as they saw it. An edit of
 * the command is a new proposal with a new hash, never a silent change to what was reviewed.
 */
export function correctionHash(command: unknown): string {
  return payloadHash('correction', command);
}
