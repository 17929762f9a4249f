import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { metricsInExpr, registeredSeriesNames } from './registered-metrics.js';

const infra = (path: string) => fileURLToPath(new URL(`../../infra/${path}`, import.meta.url));

const datasourceRef = z.object({ type: z.literal('prometheus'), uid: z.literal('${datasource}') });
interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly datasource?: z.infer<typeof datasourceRef> | undefined;
  readonly gridPos: { readonly x: number; readonly w: number };
  readonly targets?: readonly { readonly expr: string; readonly refId: string }[] | undefined;
  readonly panels?: readonly Panel[] | undefined;
}
const panelSchema: z.ZodType<Panel> = z.lazy(() =>
  z.object({
    id: z.number().int(),
    type: z.string(),
    title: z.string().min(1),
    datasource: datasourceRef.optional(),
    gridPos: z.object({ x: z.number().int().min(0), w: z.number().int().min(1) }),
    targets: z.array(z.object({ expr: z.string().min(1), refId: z.string() })).optional(),
    panels: z.array(panelSchema).optional(),
  }),
);
const dashboardSchema = z.object({
  uid: z.string(),
  title: z.string(),
  schemaVersion: z.literal(39),
  templating: z.object({
    list: z.array(z.object({ name: z.string(), type: z.string(), query: z.unknown() })),
  }),
  panels: z.array(panelSchema),
});

/** Grafana's built-in interval variables, replaced by a duration so the expression is plain PromQL. */
const withoutGrafanaVariables = (expr: string) => expr.replace(/\$__(rate_interval|interval|range)\b/g, '5m');

let registered: ReadonlySet<string>;
beforeAll(async () => {
  registered = await registeredSeriesNames();
});

describe('infra/grafana/agent-saga-dashboard.json', () => {
  const dashboard = dashboardSchema.parse(
    JSON.parse(readFileSync(infra('grafana/agent-saga-dashboard.json'), 'utf8')),
  );
  const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  const queried = panels.filter((p) => p.type !== 'row');
  const exprs = queried.flatMap((p) => (p.targets ?? []).map((t) => [p.title, t.expr] as const));

  it('picks its Prometheus through a datasource variable, on every panel', () => {
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    );
    for (const p of queried) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
    }
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each(exprs)('%s: %s parses and names only registered metrics', (_title, expr) => {
    const { names, errors } = metricsInExpr(withoutGrafanaVariables(expr));
    expect(errors).toEqual([]);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((n) => !registered.has(n))).toEqual([]);
  });

  it('shows what the operators asked for', () => {
    const shown = new Set(exprs.flatMap(([, e]) => metricsInExpr(withoutGrafanaVariables(e)).names));
    for (const name of [
      'saga_runs', // runs by terminal state, compensation and partial-compensation rates
      'saga_compensator_manual_interventions_total',
      'saga_open_cases',
      'saga_duplicate_effect_incidents_total',
      'saga_unknown_steps',
      'saga_unknown_step_oldest_age_seconds',
      'saga_reconcile_results_total',
      'saga_step_settle_duration_seconds_bucket', // forward latency
      'saga_compensation_duration_seconds_bucket', // compensation latency
      'saga_attempts_per_effect_bucket', // retry amplification
      'saga_stuck_run_oldest_age_seconds',
      'saga_irreversible_before_pivot_steps',
      'saga_pending_approvals',
      'saga_pending_approval_oldest_age_seconds',
      'saga_captures_without_reservation',
    ])
      expect(shown, name).toContain(name);
  });
});

describe('infra/grafana/provisioning', () => {
  it('provisions the Prometheus data source and the folder the dashboard is mounted in', () => {
    const ds = z
      .object({ datasources: z.array(z.object({ type: z.string(), url: z.string() })) })
      .parse(parse(readFileSync(infra('grafana/provisioning/datasources/prometheus.yml'), 'utf8')));
    expect(ds.datasources).toContainEqual(
      expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090' }),
    );
    const providers = z
      .object({
        providers: z.array(z.object({ type: z.literal('file'), options: z.object({ path: z.string() }) })),
      })
      .parse(parse(readFileSync(infra('grafana/provisioning/dashboards/agent-saga.yml'), 'utf8')));
    const compose = readFileSync(infra('compose.yaml'), 'utf8');
    expect(compose).toContain(
      `./grafana/agent-saga-dashboard.json:${providers.providers[0]!.options.path}/agent-saga-dashboard.json`,
    );
  });
});
