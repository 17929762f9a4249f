/**
 * The redaction rule (`privacy/redact-personal.ts`) and what log lines say about arguments
 * (`privacy/args-for-log.ts`): declared paths redacted in arguments, results and compensations, nested and
 * through arrays, missing paths left alone, values quoted elsewhere (an error, evidence) replaced too;
 * secrets hidden from every viewer, personal data from agent tokens and logs only.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  argsForLog,
  createToolRegistry,
  defineTool,
  errorForLog,
  payloadHash,
  PERSONAL_MARK,
  redactArgs,
  redactCorrectionCommand,
  redactPaths,
  redactStep,
  SECRET_MARK,
  stepRedaction,
  ToolDefinitionError,
} from '@agent-saga/core';

const EMAIL = 'ada.lovelace@example.com';
const LINE1 = '12 Analytical Row';

const ship = defineTool({
  name: 'ship_parcel',
  class: 'compensatable',
  version: 1,
  args: z.object({
    to: z.object({ name: z.string(), address: z.object({ line1: z.string(), city: z.string() }) }),
    contacts: z.array(z.object({ email: z.string(), role: z.string() })),
    note: z.string().optional(),
    apiToken: z.string(),
    sku: z.string(),
  }),
  personal: ['to.name', 'to.address.line1', 'contacts.email', 'note', 'nowhere.at.all'],
  personalResult: ['recipient', 'labels.address'],
  secret: ['apiToken'],
  compensate: (args) => ({ tool: 'recall_parcel', args: { name: args.to.name, reason: 'undo' } }),
  execute: () => Promise.resolve({ externalRef: 'p1', result: {} }),
  lookup: () => Promise.resolve(null),
});
const recall = defineTool({
  name: 'recall_parcel',
  class: 'irreversible',
  version: 1,
  args: z.object({ name: z.string(), reason: z.string(), courierKey: z.string().optional() }),
  secret: ['courierKey'],
  execute: () => Promise.resolve({ externalRef: null, result: {} }),
  lookup: () => Promise.resolve(null),
});
const registry = createToolRegistry([ship, recall]);

const args = {
  to: { name: 'Ada Lovelace', address: { line1: LINE1, city: 'London' } },
  contacts: [
    { email: EMAIL, role: 'buyer' },
    { email: 'charles@example.com', role: 'payer' },
  ],
  apiToken: 'tok_live_secret_123',
  sku: 'MUG-BLUE',
};
const step = {
  tool: 'ship_parcel',
  args,
  result: { parcel: 'p1', recipient: 'Ada Lovelace', labels: [{ address: LINE1, zone: 3 }] },
  error: { code: 'X', message: `courier refused ${EMAIL} at ${LINE1} (token tok_live_secret_123)` },
  compensation: {
    tool: 'recall_parcel',
    key: 'k1',
    args: { name: 'Ada Lovelace', reason: `parcel for ${EMAIL}`, courierKey: 'ck_9999' },
  },
};

describe('redactPaths', () => {
  it('marks nested paths, every element of an array, one element by index, and leaves missing paths', () => {
    const out = redactPaths(args, ['to.address.line1', 'contacts.email', 'missing.path', 'to.nope'], '#');
    expect(out).toEqual({
      ...args,
      to: { name: 'Ada Lovelace', address: { line1: '#', city: 'London' } },
      contacts: [
        { email: '#', role: 'buyer' },
        { email: '#', role: 'payer' },
      ],
    });
    expect(redactPaths(args, ['contacts.1.email'], '#')).toMatchObject({
      contacts: [{ email: EMAIL }, { email: '#' }],
    });
    // The input is never changed; null, undefined and scalars pass through.
    expect(args.contacts[0]!.email).toBe(EMAIL);
    expect(redactPaths(null, ['a'], '#')).toBeNull();
    expect(redactPaths('text', ['a'], '#')).toBe('text');
    expect(redactPaths({ a: null }, ['a'], '#')).toEqual({ a: null });
  });
});

describe('redactStep', () => {
  it('shows an agent [PERSONAL] in args, result, compensation and error, and [REDACTED] for secrets', () => {
    const seen = redactStep(step, registry, 'agent');
    expect(seen.args).toEqual({
      to: { name: PERSONAL_MARK, address: { line1: PERSONAL_MARK, city: 'London' } },
      contacts: [
        { email: PERSONAL_MARK, role: 'buyer' },
        { email: PERSONAL_MARK, role: 'payer' },
      ],
      apiToken: SECRET_MARK,
      sku: 'MUG-BLUE',
    });
    expect(seen.result).toEqual({
      parcel: 'p1',
      recipient: PERSONAL_MARK,
      labels: [{ address: PERSONAL_MARK, zone: 3 }],
    });
    // The compensation: its own tool's secret path, the forward tool's values wherever they are quoted.
    expect(seen.compensation).toEqual({
      tool: 'recall_parcel',
      key: 'k1',
      args: { name: PERSONAL_MARK, reason: `parcel for ${PERSONAL_MARK}`, courierKey: SECRET_MARK },
    });
    expect(seen.error).toEqual({
      code: 'X',
      message: `courier refused ${PERSONAL_MARK} at ${PERSONAL_MARK} (token ${SECRET_MARK})`,
    });
    expect(JSON.stringify(seen)).not.toContain(EMAIL);
    expect(JSON.stringify(seen)).not.toContain('Ada Lovelace');
  });

  it('shows an operator the personal values and still hides the secrets', () => {
    const seen = redactStep(step, registry, 'operator');
    expect(seen.args).toEqual({ ...args, apiToken: SECRET_MARK });
    expect(seen.result).toEqual(step.result);
    expect(seen.compensation).toEqual({
      ...step.compensation,
      args: { ...step.compensation.args, courierKey: SECRET_MARK },
    });
    expect(seen.error).toEqual({
      code: 'X',
      message: `courier refused ${EMAIL} at ${LINE1} (token ${SECRET_MARK})`,
    });
  });

  it('hides from logs what it hides from agents', () => {
    expect(redactStep(step, registry, 'log')).toEqual(redactStep(step, registry, 'agent'));
  });

  it('shows a step of a tool it does not know as stored, but for its compensation tool’s secrets', () => {
    const unknown = { ...step, tool: 'not_registered' };
    expect(redactStep(unknown, registry, 'agent')).toEqual({
      ...unknown,
      compensation: { ...step.compensation, args: { ...step.compensation.args, courierKey: SECRET_MARK } },
    });
  });

  it('redacts evidence and event details that quote the values, and a retry by path', () => {
    const r = stepRedaction(registry, step, 'agent');
    expect(r.text({ lookups: [{ seen: `an email to ${EMAIL}` }], other: 7 })).toEqual({
      lookups: [{ seen: `an email to ${PERSONAL_MARK}` }],
      other: 7,
    });
    // A retry with reworded arguments: its new values are redacted by path.
    const reworded = { ...args, note: 'Please ring Ada first', to: { ...args.to, name: 'A. Lovelace' } };
    expect(r.args(reworded)).toMatchObject({ note: PERSONAL_MARK, to: { name: PERSONAL_MARK } });
  });
});

describe('redactCorrectionCommand', () => {
  it('hides the recipient and the variables from agents, keeping the template and the variable names', () => {
    const command = { template: 'charge_refunded_note', to: EMAIL, vars: { amount: 4900, reason: 'late' } };
    expect(redactCorrectionCommand(command, 'agent')).toEqual({
      template: 'charge_refunded_note',
      to: PERSONAL_MARK,
      vars: { amount: PERSONAL_MARK, reason: PERSONAL_MARK },
    });
    expect(redactCorrectionCommand(command, 'operator')).toEqual(command);
  });
});

describe('redactArgs (operators’ evidence)', () => {
  it('hides secrets only', () => {
    expect(redactArgs(ship, args)).toEqual({ ...args, apiToken: SECRET_MARK });
  });
});

describe('log lines', () => {
  it('carry argument names and the prefix of the payload hash, never a value', () => {
    const line = argsForLog('ship_parcel', args);
    expect(line).toEqual({
      argNames: ['apiToken', 'contacts', 'sku', 'to'],
      argsHash: payloadHash('ship_parcel', args).slice(0, 16),
    });
    expect(argsForLog('ship_parcel', { ...args, sku: 'MUG-RED' }).argsHash).not.toBe(line.argsHash);
  });

  it('carry a tool error with the declared values scrubbed', () => {
    const err = Object.assign(new Error(`no such recipient ${EMAIL}`), { code: 'CLIENT', to: EMAIL });
    const logged = JSON.stringify(errorForLog(err, ship, args));
    expect(logged).not.toContain(EMAIL);
    expect(logged).toContain(`no such recipient ${PERSONAL_MARK}`);
    expect(logged).toContain('"code":"CLIENT"');
  });
});

describe('declarations', () => {
  it('refuses a personal path that is not a dotted path, naming the field', () => {
    const bad = () =>
      defineTool({
        name: 'bad_tool',
        class: 'pure',
        version: 1,
        args: z.object({}),
        personal: ['to..name'],
        execute: () => Promise.resolve({ externalRef: null, result: {} }),
      });
    expect(bad).toThrow(ToolDefinitionError);
    expect(bad).toThrow(/personal/);
  });
});
