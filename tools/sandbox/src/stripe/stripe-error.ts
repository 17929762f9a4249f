import type { FastifyReply } from 'fastify';

/** Stripe's error `type`s that the sandbox answers with. */
export const StripeErrorType = {
  INVALID_REQUEST: 'invalid_request_error',
  CARD: 'card_error',
  IDEMPOTENCY: 'idempotency_error',
  API: 'api_error',
} as const;
export type StripeErrorType = (typeof StripeErrorType)[keyof typeof StripeErrorType];

/**
 * An error answered in Stripe's documented shape, `{ error: { type, code, message, param, doc_url } }`.
 * `saved` says whether the idempotency layer keeps it: Stripe saves "the status code and body of the first
 * request made with a given idempotency key after endpoint execution begins", so a parameter that fails
 * validation (`saved: false`) leaves the key free, while a decline or an illegal state move is replayed.
 */
export class StripeApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly type: StripeErrorType,
    message: string,
    readonly details: {
      readonly code?: string;
      readonly param?: string;
      readonly declineCode?: string;
      readonly extra?: Record<string, unknown>;
      readonly saved?: boolean;
    } = {},
  ) {
    super(message);
  }

  get saved(): boolean {
    return this.details.saved ?? true;
  }

  toBody(): { error: Record<string, unknown> } {
    const { code, param, declineCode, extra } = this.details;
    return {
      error: {
        ...(code === undefined
          ? {}
          : { code, doc_url: `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}` }),
        ...(declineCode === undefined ? {} : { decline_code: declineCode }),
        message: this.message,
        ...(param === undefined ? {} : { param }),
        ...extra,
        type: this.type,
      },
    };
  }
}

/** A parameter problem found before the endpoint runs: never saved under an idempotency key. */
export function invalidParam(message: string, code: string, param: string): StripeApiError {
  return new StripeApiError(400, StripeErrorType.INVALID_REQUEST, message, { code, param, saved: false });
}

export function missingParam(param: string): StripeApiError {
  return invalidParam(`Missing required param: ${param}.`, 'parameter_missing', param);
}

export function resourceMissing(objectName: string, id: string, param: string): StripeApiError {
  return new StripeApiError(404, StripeErrorType.INVALID_REQUEST, `No such ${objectName}: '${id}'`, {
    code: 'resource_missing',
    param,
    saved: false,
  });
}

export function sendStripeError(reply: FastifyReply, error: StripeApiError): FastifyReply {
  return reply.code(error.statusCode).send(error.toBody());
}
