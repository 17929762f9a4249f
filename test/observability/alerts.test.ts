import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { metricsInExpr, registeredSeriesNames } from './registered-metrics.js';

const infra = (path: string) => fileURLToPath(new URL(`../../infra/${path}`, import.meta.url));
const readYaml = (path: string): unknown => parse(readFileSync(infra(path), 'utf8'), { merge: true });

const alertsSchema = z.object({
  groups: z.array(
    z.object({
      name: z.string(),
      rules: z.array(
        z.object({
          alert: z.string(),
          expr: z.string(),
          for: z.string().optional(),
          labels: z.object({ severity: z.enum(['page', 'ticket']) }),
          annotations: z.object({ summary: z.string() }),
        }),
      ),
    }),
  ),
});

let registered: ReadonlySet<string>;
beforeAll(async () => {
  registered = await registeredSeriesNames();
});

describe('infra/prometheus/alerts.yml', () => {
  const rules = alertsSchema.parse(readYaml('prometheus/alerts.yml')).groups.flatMap((g) => g.rules);

  it('names each alert once, and keeps the alerts the business relies on', () => {
    const names = rules.map((r) => r.alert);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining([
        'SagaDuplicateEffect',
        'SagaUnknownBacklogGrowing',
        'SagaCaptureWithoutReservation',
        'SagaCompensationFailingRepeatedly',
        'SagaIrreversibleBeforeApproval',
        'SagaApprovalNearExpiry',
      ]),
    );
  });

  it.each(rules.map((r) => [r.alert, r.expr] as const))(
    '%s: its expression parses and every metric it names is registered by some role',
    (_alert, expr) => {
      const { names, errors } = metricsInExpr(expr);
      expect(errors).toEqual([]);
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((n) => !registered.has(n))).toEqual([]);
    },
  );
});

describe('infra/prometheus/prometheus.yml and infra/compose.yaml', () => {
  const prometheus = z
    .object({
      rule_files: z.array(z.string()),
      scrape_configs: z.array(
        z.object({
          job_name: z.string(),
          dns_sd_configs: z.array(z.object({ names: z.array(z.string()), port: z.number() })),
        }),
      ),
    })
    .parse(readYaml('prometheus/prometheus.yml'));
  const compose = z
    .object({
      services: z.record(
        z.string(),
        z.object({
          command: z.array(z.string()).optional(),
          environment: z.record(z.string(), z.string()).optional(),
          volumes: z.array(z.string()).optional(),
        }),
      ),
    })
    .parse(readYaml('compose.yaml'));

  it('scrapes every role on the port it serves metrics on', () => {
    const scraped = new Map(
      prometheus.scrape_configs.flatMap((j) =>
        j.dns_sd_configs.flatMap((d) => d.names.map((n) => [n, d.port])),
      ),
    );
    const roles = Object.entries(compose.services).filter(([, s]) =>
      (s.command ?? []).some((arg) => /^services\/\w+\/dist\/bin\//.test(arg)),
    );
    expect(roles.map(([name]) => name).sort()).toEqual([
      'api',
      'compensator',
      'executor',
      'reconciler',
      'relay',
    ]);
    for (const [name, s] of roles) {
      const port = s.environment?.METRICS_PORT;
      expect(port, `${name} serves metrics`).toBeDefined();
      expect(scraped.get(name), `${name} is scraped`).toBe(Number(port));
    }
  });

  it('mounts the alert rules where Prometheus loads them', () => {
    const mounts = compose.services.prometheus?.volumes ?? [];
    for (const file of prometheus.rule_files)
      expect(mounts.some((m) => m.startsWith('./prometheus/') && m.split(':')[1] === file)).toBe(true);
  });
});
