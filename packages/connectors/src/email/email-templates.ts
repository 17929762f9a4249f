import { ClientError } from '@agent-saga/core';

/** What a template renders: the provider gets finished text, never a template of its own. */
export interface RenderedEmail {
  readonly subject: string;
  readonly text: string;
  readonly html?: string;
}

/** A template: validates its variables (throwing on bad ones) and renders. Pure: no I/O, no clock. */
export type EmailTemplate = (vars: Readonly<Record<string, unknown>>) => RenderedEmail;

/** The registry the email tools render from: template name → template. */
export type EmailTemplates = Readonly<Record<string, EmailTemplate>>;

/**
 * Renders `name` with `vars`. An unknown template or variables the template refuses are definitive
 * refusals made before anything was sent: {@link ClientError}.
 */
export function renderEmail(
  templates: EmailTemplates,
  name: string,
  vars: Readonly<Record<string, unknown>>,
): RenderedEmail {
  const template = Object.hasOwn(templates, name) ? templates[name] : undefined;
  if (template === undefined) {
    throw new ClientError(`email: no template ${JSON.stringify(name)}`, {
      vendor: 'email',
      vendorCode: 'unknown_template',
    });
  }
  let rendered: RenderedEmail;
  try {
    rendered = template(vars);
  } catch (cause) {
    throw new ClientError(
      `email: template ${name} refused its variables: ${cause instanceof Error ? cause.message : String(cause)}`,
      { vendor: 'email', vendorCode: 'invalid_template_vars' },
      { cause },
    );
  }
  if (rendered.subject.trim() === '' || rendered.text.trim() === '') {
    throw new ClientError(`email: template ${name} rendered an empty subject or body`, {
      vendor: 'email',
      vendorCode: 'empty_render',
    });
  }
  return rendered;
}
