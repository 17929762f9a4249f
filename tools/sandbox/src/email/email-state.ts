/** An email as Resend keeps it (the `GET /emails/:id` shape, plus the key it was sent under). */
export interface SentEmail {
  readonly object: 'email';
  readonly id: string;
  readonly from: string;
  readonly to: string[];
  readonly subject: string;
  readonly html: string | null;
  readonly text: string | null;
  readonly cc: string[] | null;
  readonly bcc: string[] | null;
  readonly reply_to: string[] | null;
  readonly tags: { name: string; value: string }[];
  readonly created_at: string;
  readonly scheduled_at: string | null;
  readonly last_event: 'delivered';
}

/** The fake Resend account: emails sent, oldest first, and the idempotency key each was sent under. */
export class EmailState {
  readonly emails = new Map<string, SentEmail>();
  readonly sentWithKey = new Map<string, string>();

  clear(): void {
    this.emails.clear();
    this.sentWithKey.clear();
  }
}

/** Resend's `created_at` format: `2023-04-03T22:13:42.674981+00:00` (microseconds, explicit offset). */
export function resendTimestamp(ms: number = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');
}
