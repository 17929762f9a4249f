import { z } from 'zod';
import type { HttpEndpoint } from '../http/send-http-request.js';
import type { EmailConfig } from './email-config.js';

/** The tag that carries the harness's key: Resend allows only `[A-Za-z0-9_-]` in tags; our keys are hex. */
export const SAGA_KEY_TAG = 'saga_key';

export function resendEndpoint(config: EmailConfig): HttpEndpoint {
  return Object.freeze({
    vendor: 'email',
    baseUrl: config.apiBase,
    authorization: `Bearer ${config.apiKey}`,
  });
}

/** 200 of `POST /emails`. */
export const sentEmailSchema = z.object({ id: z.string().min(1) });

/** One page of `GET /emails` (newest first). List items carry no tags, as on Resend. */
export const emailListSchema = z.object({
  has_more: z.boolean(),
  data: z.array(z.object({ id: z.string(), from: z.string(), created_at: z.string() })),
});

/** `GET /emails/{id}`: the email with its tags. */
export const emailSchema = z.object({
  id: z.string(),
  to: z.array(z.string()),
  subject: z.string(),
  created_at: z.string(),
  tags: z.array(z.object({ name: z.string(), value: z.string() })).nullish(),
});

/** The bare address of `Name <addr>` or `addr`, lower-cased, so a provider's normalisation still matches. */
export function bareAddress(from: string): string {
  const m = /<([^>]+)>/.exec(from);
  return (m?.[1] ?? from).trim().toLowerCase();
}
