import type { FastifyInstance, FastifyRequest } from 'fastify';
import { idempotencyKeyOf } from '../idempotency/install-idempotency.js';
import type { SandboxSettings } from '../settings.js';
import {
  applyMetadata,
  assertKnownParams,
  expandList,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalString,
  requiredInteger,
  requiredString,
  type FormParams,
} from './form-params.js';
import { listPage, readLimit } from './list-page.js';
import {
  cancelPaymentIntent,
  capturePaymentIntent,
  confirmPaymentIntent,
  createPaymentIntent,
  getPaymentIntent,
} from './payment-intents.js';
import { matchesSearch, parseSearchQuery } from './search-query.js';
import { invalidParam } from './stripe-error.js';
import { CaptureMethod, type PaymentIntent } from './stripe-objects.js';
import type { StripeState } from './stripe-state.js';

const CREATE_PARAMS = [
  'amount',
  'currency',
  'customer',
  'payment_method',
  'confirm',
  'off_session',
  'capture_method',
  'description',
  'receipt_email',
  'metadata',
  'expand',
  'payment_method_types',
  'automatic_payment_methods',
  'return_url',
  'statement_descriptor',
  'statement_descriptor_suffix',
  'setup_future_usage',
  'confirmation_method',
  'error_on_requires_action',
];
const UPDATE_PARAMS = ['description', 'receipt_email', 'metadata', 'expand'];
/** Why 50: Stripe's minimum charge is $0.50 in USD (and about that in other currencies). */
const MIN_AMOUNT = 50;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function body(request: FastifyRequest): FormParams {
  return (request.body ?? {}) as FormParams;
}

function receiptEmailOf(params: FormParams): string | undefined {
  const email = optionalString(params, 'receipt_email');
  if (email !== undefined && !EMAIL.test(email)) {
    throw invalidParam(`Invalid email address: ${email}`, 'email_invalid', 'receipt_email');
  }
  return email;
}

/** The answer for a PaymentIntent, with `latest_charge` and `customer` expanded when asked. */
function present(state: StripeState, pi: PaymentIntent, params: FormParams): Record<string, unknown> {
  const out: Record<string, unknown> = { ...structuredClone(pi) };
  for (const field of expandList(params)) {
    if (field === 'latest_charge' && pi.latest_charge !== null)
      out.latest_charge = structuredClone(state.charges.get(pi.latest_charge));
    else if (field === 'customer' && pi.customer !== null)
      out.customer = structuredClone(state.customers.get(pi.customer));
    else if (field !== 'latest_charge' && field !== 'customer') {
      throw invalidParam(
        `This property cannot be expanded (${field}).`,
        'parameter_invalid_string',
        'expand',
      );
    }
  }
  return out;
}

/** Why base64url JSON: Stripe's `next_page` is an opaque cursor; an offset is enough for a snapshot. */
function decodePage(page: string | undefined): number {
  if (page === undefined) return 0;
  try {
    const offset = (JSON.parse(Buffer.from(page, 'base64url').toString('utf8')) as { offset?: unknown })
      .offset;
    if (typeof offset === 'number' && Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // fall through to the error below
  }
  throw invalidParam('Invalid page cursor.', 'parameter_invalid_string', 'page');
}

/** The PaymentIntent endpoints: create, retrieve, update, list, search, confirm, capture, cancel. */
export function registerPaymentIntentRoutes(
  app: FastifyInstance,
  state: StripeState,
  settings: SandboxSettings,
): void {
  app.post('/v1/payment_intents', (request) => {
    const params = body(request);
    assertKnownParams(params, CREATE_PARAMS);
    const amount = requiredInteger(params, 'amount');
    const currency = requiredString(params, 'currency').toLowerCase();
    if (amount < MIN_AMOUNT) {
      throw invalidParam(`Amount must be at least $0.50 ${currency}`, 'amount_too_small', 'amount');
    }
    const pi = createPaymentIntent(state, {
      amount,
      currency,
      customer: optionalString(params, 'customer'),
      paymentMethod: optionalString(params, 'payment_method'),
      captureMethod:
        optionalEnum(params, 'capture_method', Object.values(CaptureMethod)) ?? CaptureMethod.AUTOMATIC,
      description: optionalString(params, 'description'),
      receiptEmail: receiptEmailOf(params),
      metadata: applyMetadata(params, {}),
      confirm: optionalBoolean(params, 'confirm') ?? false,
    });
    const key = idempotencyKeyOf(request);
    if (key !== undefined) state.createdWithKey.set(pi.id, key);
    return present(state, pi, params);
  });

  app.get('/v1/payment_intents', (request) => {
    const params = request.query as FormParams;
    const customer = optionalString(params, 'customer');
    const all = [...state.paymentIntents.values()].reverse();
    const items = customer === undefined ? all : all.filter((pi) => pi.customer === customer);
    return listPage(items, params, '/v1/payment_intents');
  });

  app.get('/v1/payment_intents/search', (request) => {
    const params = request.query as FormParams;
    const query = parseSearchQuery(requiredString(params, 'query'));
    const limit = readLimit(params);
    const offset = decodePage(optionalString(params, 'page'));
    const hits = state.paymentIntentSearch
      .visible(settings.stripeSearchLagMs)
      .filter((pi) => matchesSearch(query, pi))
      .reverse();
    const data = hits.slice(offset, offset + limit);
    const hasMore = hits.length > offset + limit;
    return {
      object: 'search_result',
      data,
      has_more: hasMore,
      next_page: hasMore
        ? Buffer.from(JSON.stringify({ offset: offset + limit })).toString('base64url')
        : null,
      url: '/v1/payment_intents/search',
    };
  });

  app.get<{ Params: { id: string } }>('/v1/payment_intents/:id', (request) =>
    present(state, getPaymentIntent(state, request.params.id), request.query as FormParams),
  );

  app.post<{ Params: { id: string } }>('/v1/payment_intents/:id', (request) => {
    const params = body(request);
    assertKnownParams(params, UPDATE_PARAMS);
    const pi = getPaymentIntent(state, request.params.id);
    const description = optionalString(params, 'description');
    const receiptEmail = receiptEmailOf(params);
    pi.metadata = applyMetadata(params, pi.metadata);
    if (description !== undefined) pi.description = description;
    if (receiptEmail !== undefined) pi.receipt_email = receiptEmail;
    state.savePaymentIntent(pi);
    return present(state, pi, params);
  });

  app.post<{ Params: { id: string } }>('/v1/payment_intents/:id/confirm', (request) => {
    const params = body(request);
    assertKnownParams(params, [
      'payment_method',
      'off_session',
      'return_url',
      'expand',
      'receipt_email',
      'error_on_requires_action',
    ]);
    const pi = getPaymentIntent(state, request.params.id);
    confirmPaymentIntent(state, pi, optionalString(params, 'payment_method'));
    return present(state, pi, params);
  });

  app.post<{ Params: { id: string } }>('/v1/payment_intents/:id/capture', (request) => {
    const params = body(request);
    assertKnownParams(params, ['amount_to_capture', 'metadata', 'expand', 'statement_descriptor']);
    const pi = getPaymentIntent(state, request.params.id);
    const amountToCapture = optionalInteger(params, 'amount_to_capture');
    pi.metadata = applyMetadata(params, pi.metadata);
    capturePaymentIntent(state, pi, amountToCapture);
    return present(state, pi, params);
  });

  app.post<{ Params: { id: string } }>('/v1/payment_intents/:id/cancel', (request) => {
    const params = body(request);
    assertKnownParams(params, ['cancellation_reason', 'expand']);
    const reason = optionalEnum(params, 'cancellation_reason', [
      'duplicate',
      'fraudulent',
      'requested_by_customer',
      'abandoned',
    ]);
    const pi = getPaymentIntent(state, request.params.id);
    cancelPaymentIntent(state, pi, reason);
    return present(state, pi, params);
  });
}
