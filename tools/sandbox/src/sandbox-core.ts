import { buildLedger, type Ledger } from './admin/ledger.js';
import { EmailState } from './email/email-state.js';
import { FaultInjector } from './faults/fault-injector.js';
import { faultSpecSchema, type FaultRule } from './faults/fault-rule.js';
import { RequestLog, type RequestLogEntry } from './http/request-log.js';
import { IdempotencyStore } from './idempotency/idempotency-store.js';
import { JiraState } from './jira/jira-state.js';
import { seedSchema, type Seed } from './seed.js';
import { settingsPatchSchema, type SandboxSettings } from './settings.js';
import { ShippingState } from './shipping/shipping-state.js';
import { seedCustomer } from './stripe/customers.js';
import { StripeState } from './stripe/stripe-state.js';

/**
 * The in-process control of a running sandbox: what `/__admin/*` does, callable directly by tests that
 * started the sandbox themselves. Inputs are parsed with the same schemas as the HTTP bodies.
 */
export interface SandboxAdmin {
  ledger(): Ledger;
  addFault(spec: unknown): FaultRule;
  faults(): readonly FaultRule[];
  removeFault(id: string): boolean;
  clearFaults(): void;
  configure(patch: unknown): Readonly<SandboxSettings>;
  settings(): Readonly<SandboxSettings>;
  seed(seed: unknown): void;
  requests(): readonly RequestLogEntry[];
  clearRequests(): void;
  /** Forgets every effect, key, fault and logged request; restores the initial settings and seed. */
  reset(): void;
}

/** All in-memory state of one sandbox, shared by the vendor servers and the admin API. */
export class SandboxCore implements SandboxAdmin {
  readonly stripe = new StripeState();
  readonly jira: JiraState;
  readonly email = new EmailState();
  readonly shipping = new ShippingState();
  readonly stripeIdempotency = new IdempotencyStore();
  readonly emailIdempotency = new IdempotencyStore();
  readonly shippingIdempotency = new IdempotencyStore();
  readonly faultInjector = new FaultInjector();
  readonly requestLog = new RequestLog();
  /** Mutable on purpose: the servers read it at query time (see settings.ts). */
  readonly liveSettings: SandboxSettings;

  constructor(
    private readonly initialSettings: Readonly<SandboxSettings>,
    private readonly initialSeed: Seed,
    jiraProjectKeys: readonly string[],
  ) {
    this.jira = new JiraState(jiraProjectKeys);
    this.liveSettings = { ...initialSettings };
    this.seed(initialSeed);
  }

  ledger(): Ledger {
    return buildLedger(this);
  }

  addFault(spec: unknown): FaultRule {
    return this.faultInjector.add(faultSpecSchema.parse(spec));
  }

  faults(): readonly FaultRule[] {
    return this.faultInjector.list();
  }

  removeFault(id: string): boolean {
    return this.faultInjector.remove(id);
  }

  clearFaults(): void {
    this.faultInjector.clear();
  }

  configure(patch: unknown): Readonly<SandboxSettings> {
    Object.assign(this.liveSettings, settingsPatchSchema.parse(patch));
    return this.settings();
  }

  settings(): Readonly<SandboxSettings> {
    return { ...this.liveSettings };
  }

  seed(input: unknown): void {
    const seed = seedSchema.parse(input);
    for (const customer of seed.customers ?? []) seedCustomer(this.stripe, customer);
    for (const order of seed.orders ?? []) this.shipping.orders.set(order.id, structuredClone(order));
  }

  requests(): readonly RequestLogEntry[] {
    return this.requestLog.list();
  }

  clearRequests(): void {
    this.requestLog.clear();
  }

  reset(): void {
    this.stripe.clear();
    this.jira.clear();
    this.email.clear();
    this.shipping.clear();
    this.stripeIdempotency.clear();
    this.emailIdempotency.clear();
    this.shippingIdempotency.clear();
    this.faultInjector.clear();
    this.requestLog.clear();
    Object.assign(this.liveSettings, this.initialSettings);
    this.seed(this.initialSeed);
  }
}
