import { uuid } from '../ids.js';
import { resendTimestamp, type EmailState, type SentEmail } from './email-state.js';
import { ResendApiError } from './resend-error.js';

/** Why 50: Resend's documented maximum of recipients in `to`. Why 256: its limit on tag names and values. */
const MAX_RECIPIENTS = 50;
const MAX_TAG_LENGTH = 256;
/** Resend allows only ASCII letters, digits, underscores and dashes in tag names and values. */
const TAG_CHARS = /^[A-Za-z0-9_-]+$/;

function missing(field: string): ResendApiError {
  return new ResendApiError(422, 'missing_required_field', `Missing \`${field}\` field.`);
}

function invalid(message: string): ResendApiError {
  return new ResendApiError(422, 'validation_error', message);
}

function addresses(value: unknown, field: string): string[] | null {
  if (value === undefined || value === null) return null;
  const list = Array.isArray(value) ? value : [value];
  if (list.some((a) => typeof a !== 'string' || !/@/.test(a))) {
    throw invalid(
      `Invalid \`${field}\` field. The email address needs to follow the \`email@example.com\` or \`Name <email@example.com>\` format.`,
    );
  }
  return list as string[];
}

function tags(value: unknown): { name: string; value: string }[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalid('The `tags` field must be an array.');
  return value.map((tag: unknown) => {
    const { name, value: v } = (tag ?? {}) as { name?: unknown; value?: unknown };
    for (const [label, s] of [
      ['name', name],
      ['value', v],
    ] as const) {
      if (typeof s !== 'string' || s.length > MAX_TAG_LENGTH || !TAG_CHARS.test(s)) {
        throw invalid(
          `The tag \`${label}\` can only contain ASCII letters (a–z, A–Z), numbers (0–9), underscores (_), or dashes (-), and be at most ${MAX_TAG_LENGTH} characters.`,
        );
      }
    }
    return { name: name as string, value: v as string };
  });
}

/** Validates a `POST /emails` body as Resend does, and records the email as sent (and delivered). */
export function sendEmail(state: EmailState, body: unknown, idempotencyKey: string | undefined): SentEmail {
  if (typeof body !== 'object' || body === null) throw invalid('The request body must be a JSON object.');
  const b = body as Record<string, unknown>;
  if (typeof b.from !== 'string' || b.from === '') throw missing('from');
  if (b.to === undefined) throw missing('to');
  if (typeof b.subject !== 'string' || b.subject === '') throw missing('subject');
  const to = addresses(b.to, 'to') ?? [];
  if (to.length === 0) throw missing('to');
  if (to.length > MAX_RECIPIENTS)
    throw invalid(`The \`to\` field can have at most ${MAX_RECIPIENTS} recipients.`);
  const html = typeof b.html === 'string' ? b.html : null;
  const text = typeof b.text === 'string' ? b.text : null;
  if (html === null && text === null) throw invalid('Missing `html` or `text` field.');
  const email: SentEmail = {
    object: 'email',
    id: uuid(),
    from: b.from,
    to,
    subject: b.subject,
    html,
    text,
    cc: addresses(b.cc, 'cc'),
    bcc: addresses(b.bcc, 'bcc'),
    reply_to: addresses(b.reply_to, 'reply_to'),
    tags: tags(b.tags),
    created_at: resendTimestamp(),
    scheduled_at: typeof b.scheduled_at === 'string' ? b.scheduled_at : null,
    last_event: 'delivered',
  };
  state.emails.set(email.id, email);
  if (idempotencyKey !== undefined) state.sentWithKey.set(email.id, idempotencyKey);
  return email;
}
