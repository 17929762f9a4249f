import { Audience, defineTool, ToolClass } from '@agent-saga/core';
import { z } from 'zod';
import { sendHttpRequest } from '../http/send-http-request.js';
import type { EmailConfig } from './email-config.js';
import { renderEmail, type EmailTemplates } from './email-templates.js';
import { findEmailByTag } from './find-email-by-tag.js';
import { resendEndpoint, SAGA_KEY_TAG, sentEmailSchema } from './resend-connection.js';

/** Arguments of `send_email` and `create_email_draft`: a template of the registry, never free text. */
export function emailArgs(templates: EmailTemplates) {
  return z.object({
    to: z.email(),
    template: z
      .string()
      .refine((t) => Object.hasOwn(templates, t), { message: 'not a registered email template' }),
    vars: z.record(z.string(), z.unknown()).default({}),
  });
}

/** The correction stored with every sent email: a note asking to disregard it. Never sent automatically. */
export const EMAIL_CORRECTION_TEMPLATE = 'email_sent_in_error';

/**
 * `send_email`: renders the template here (the provider never sees a template) and sends it with
 * `POST /emails`, carrying the key twice: as `Idempotency-Key` (Resend replays a same-key re-send for 24 h,
 * so a retry after a 504 sends nothing new) and as the tag `saga_key=<key>`, which is how the lookup finds
 * the email (see `findEmailByTag`). Irreversible, audience `customer`: the harness holds it for a human
 * before the call, and stores a correction (`email_sent_in_error`) that is never sent by itself.
 */
export function sendEmailTool(config: EmailConfig, templates: EmailTemplates) {
  const endpoint = resendEndpoint(config);
  return defineTool({
    name: 'send_email',
    description:
      "Sends an email from a template to one recipient. Cannot be unsent: held for a person's approval unless a pivot covers it.",
    class: ToolClass.IRREVERSIBLE,
    version: 1,
    args: emailArgs(templates),
    identity: ['to', 'template'],
    // A second email to one customer in one run is legitimate (a refund confirmation for a second order, a
    // follow-up), and (to, template) cannot tell it from a duplicate; every send is held for a person or a
    // pivot approval anyway (irreversible), who sees the earlier one in the run.
    repeatable: true,
    // The recipient, and the template's variables (a name, an order's details); the subject is rendered
    // from them. The template name is not personal.
    personal: ['to', 'vars'],
    personalResult: ['to', 'subject'],
    audience: [Audience.CUSTOMER],
    correction: (args) => ({
      template: EMAIL_CORRECTION_TEMPLATE,
      to: args.to,
      vars: { originalTemplate: args.template },
    }),
    async execute(args, ctx) {
      const rendered = renderEmail(templates, args.template, args.vars);
      const answer = await sendHttpRequest(endpoint, {
        method: 'POST',
        path: '/emails',
        headers: { 'Idempotency-Key': ctx.idempotencyKey },
        body: {
          from: config.from,
          to: [args.to],
          subject: rendered.subject,
          text: rendered.text,
          ...(rendered.html !== undefined ? { html: rendered.html } : {}),
          tags: [{ name: SAGA_KEY_TAG, value: ctx.idempotencyKey }],
        },
        answer: sentEmailSchema,
        call: ctx,
      });
      return {
        externalRef: answer.body.id,
        result: { id: answer.body.id, to: args.to, template: args.template, subject: rendered.subject },
      };
    },
    lookup: (key, ctx) => findEmailByTag(config, key, ctx),
    // Sent with Resend's Idempotency-Key: a re-send under it makes no second email.
    dedupesByKey: true,
    lookupLagMs: config.lookupLagMs,
  });
}
