import type { FastifyInstance } from 'fastify';
import { prefixedId, unixSeconds } from '../ids.js';
import { applyMetadata, assertKnownParams, optionalString, type FormParams } from './form-params.js';
import { listPage } from './list-page.js';
import { TEST_PAYMENT_METHODS } from './payment-methods.js';
import { invalidParam, resourceMissing } from './stripe-error.js';
import type { Customer } from './stripe-objects.js';
import type { StripeState } from './stripe-state.js';

/** A customer to seed through `/__admin/seed` or the defaults: id, email, default payment method. */
export interface CustomerSeed {
  readonly id: string;
  readonly email?: string | undefined;
  readonly name?: string | undefined;
  readonly defaultPaymentMethod?: string | undefined;
}

export function seedCustomer(state: StripeState, seed: CustomerSeed): Customer {
  const customer: Customer = {
    id: seed.id,
    object: 'customer',
    created: unixSeconds(),
    email: seed.email ?? null,
    name: seed.name ?? null,
    description: null,
    invoice_settings: { default_payment_method: seed.defaultPaymentMethod ?? null },
    livemode: false,
    metadata: {},
  };
  state.customers.set(customer.id, customer);
  return customer;
}

const CREATE_PARAMS = [
  'email',
  'name',
  'description',
  'metadata',
  'payment_method',
  'invoice_settings',
  'expand',
];

function defaultPaymentMethodOf(params: FormParams): string | undefined {
  const settings = params.invoice_settings;
  const fromSettings =
    typeof settings === 'object' && settings !== null
      ? (settings as Record<string, unknown>).default_payment_method
      : undefined;
  const pm = typeof fromSettings === 'string' ? fromSettings : optionalString(params, 'payment_method');
  if (pm !== undefined && !TEST_PAYMENT_METHODS.has(pm)) {
    throw invalidParam(
      `No such PaymentMethod: '${pm}'`,
      'resource_missing',
      'invoice_settings[default_payment_method]',
    );
  }
  return pm;
}

/** `POST /v1/customers`, `GET /v1/customers/:id`, `GET /v1/customers`. */
export function registerCustomerRoutes(app: FastifyInstance, state: StripeState): void {
  app.post('/v1/customers', (request) => {
    const params = (request.body ?? {}) as FormParams;
    assertKnownParams(params, CREATE_PARAMS);
    const customer = seedCustomer(state, {
      id: prefixedId('cus', 14),
      email: optionalString(params, 'email'),
      name: optionalString(params, 'name'),
      defaultPaymentMethod: defaultPaymentMethodOf(params),
    });
    customer.description = optionalString(params, 'description') ?? null;
    customer.metadata = applyMetadata(params, {});
    return structuredClone(customer);
  });

  app.get<{ Params: { id: string } }>('/v1/customers/:id', (request) => {
    const customer = state.customers.get(request.params.id);
    if (customer === undefined) throw resourceMissing('customer', request.params.id, 'id');
    return structuredClone(customer);
  });

  app.get('/v1/customers', (request) =>
    listPage([...state.customers.values()].reverse(), request.query as FormParams, '/v1/customers'),
  );
}
