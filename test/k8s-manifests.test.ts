/**
 * The Kubernetes manifests (infra/k8s) as CI can check them without a cluster: the base and the example
 * overlay rendered (test/fixtures/render-kustomization.ts), every object validated against the Kubernetes
 * and KEDA JSON schemas (`kubernetes-models`, `@kubernetes-models/keda`, shipped with their schemas), and
 * what a deployment relies on asserted: every role has probes on endpoints it serves, resources, a
 * disruption budget, a grace period longer than its drain; its config parser accepts the environment the
 * manifests give it; its command runs a file `pnpm build` produces; secrets are only referenced.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import {
  baseConfigSchema,
  CLOSE_TIMEOUT_MS,
  DEFAULT_TOOL_TIMEOUT_MS,
  ROLE_NODE_FLAGS,
} from '@agent-saga/core';
import { compensatorConfigSchema } from '@agent-saga/compensator';
import { dispatcherConfigSchema } from '@agent-saga/dispatcher';
import { gatewayConfigSchema } from '@agent-saga/mcp-gateway';
import { reconcilerConfigSchema } from '@agent-saga/reconciler';
import { podSpecOf, renderKustomization, type K8sObject } from './fixtures/render-kustomization.js';

const ROOT = join(import.meta.dirname, '..');
const K8S = join(ROOT, 'infra/k8s');
const base = renderKustomization(join(K8S, 'base'));
const overlay = renderKustomization(join(K8S, 'overlays/example'));

/** The model of each kind the manifests use; an object of any other kind fails the test. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
};

type AnySchema = z.ZodObject<z.ZodRawShape>;
interface RoleSpec {
  readonly schema: AnySchema;
  /** The longest a drain may take with the parsed config: the grace period must exceed it. */
  readonly drainMs: (c: Record<string, number>) => number;
  /** The ports (config names) the role listens on, with the container port name each must match. */
  readonly ports: Readonly<Record<string, string>>;
}

const schemaOf = (s: unknown) => s as AnySchema;
/** Every role, its config parser, its drain and its listeners. */
const ROLES: Readonly<Record<string, RoleSpec>> = {
  api: {
    schema: schemaOf(dispatcherConfigSchema),
    drainMs: (c) => c.EXECUTOR_DRAIN_MS! + 2 * CLOSE_TIMEOUT_MS,
    ports: { PORT: 'http', METRICS_PORT: 'metrics' },
  },
  relay: {
    schema: schemaOf(dispatcherConfigSchema),
    drainMs: (c) => 2 * c.REDIS_COMMAND_TIMEOUT_MS! + CLOSE_TIMEOUT_MS,
    ports: { METRICS_PORT: 'metrics' },
  },
  executor: {
    schema: schemaOf(dispatcherConfigSchema),
    drainMs: (c) => c.EXECUTOR_DRAIN_MS! + 2 * CLOSE_TIMEOUT_MS,
    ports: { METRICS_PORT: 'metrics' },
  },
  reconciler: {
    schema: schemaOf(reconcilerConfigSchema),
    // The reconcile lease: two lookups at the default tool timeout, the re-check pause and the margin.
    drainMs: (c) =>
      2 * DEFAULT_TOOL_TIMEOUT_MS + c.LOOKUP_RECHECK_MS! + c.RECONCILER_LEASE_MARGIN_MS! + CLOSE_TIMEOUT_MS,
    ports: { METRICS_PORT: 'metrics' },
  },
  compensator: {
    schema: schemaOf(compensatorConfigSchema),
    drainMs: (c) => c.COMPENSATOR_DRAIN_MS! + 2 * CLOSE_TIMEOUT_MS,
    ports: { METRICS_PORT: 'metrics' },
  },
  'mcp-gateway': {
    schema: schemaOf(gatewayConfigSchema),
    drainMs: (c) => c.MCP_WAIT_MS! + 2_000,
    ports: { MCP_PORT: 'mcp' },
  },
};
/** What `agent-saga migrate` and `schema-version` read (the CLI's `databaseConfigSchema` is this pick). */
const CLI_SCHEMA = schemaOf(baseConfigSchema.pick({ DATABASE_URL: true, SAGA_DB_SCHEMA: true }));

/** The keys of the Secret the operator creates, with placeholder values each role's parser accepts. */
const SECRET_PLACEHOLDERS: Readonly<Record<string, string>> = {
  DATABASE_URL: 'postgres://saga:secret@postgres:5432/saga',
  REDIS_URL: 'redis://redis:6379',
  SAGA_KEY_NAMESPACE: 'deployment-namespace-1',
  METRICS_TOKEN: 'a-scrape-token-of-32-characters!',
};
const SECRET_NAME = 'agent-saga-secrets';

type Container = {
  name: string;
  image: string;
  command?: string[];
  env?: { name: string; value?: string; valueFrom?: Record<string, { name: string; key: string }> }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  [k: string]: unknown;
};

const objectsOf = (objects: readonly K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const named = (objects: readonly K8sObject[], kind: string, name: string) => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name}`);
  return o;
};
const containersOf = (o: K8sObject) => (podSpecOf(o)?.containers ?? []) as Container[];
const initContainersOf = (o: K8sObject) => (podSpecOf(o)?.initContainers ?? []) as Container[];

/**
 * The environment a container gets, as its process would see it: literal values, ConfigMap keys (from
 * `envFrom` and `configMapKeyRef`, read from the rendered ConfigMaps) and the Secret's placeholders.
 * Fails on a reference to a ConfigMap, a Secret or a key that the manifests or the Secret do not have.
 */
function environmentOf(c: Container, objects: readonly K8sObject[]): Record<string, string> {
  const configMap = (name: string) => named(objects, 'ConfigMap', name).data as Record<string, string>;
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (from.secretRef) throw new Error(`${c.name}: envFrom a whole Secret; reference each key by name`);
    Object.assign(env, configMap(from.configMapRef!.name));
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.secretKeyRef;
      expect(ref.name, `${c.name}: ${e.name}`).toBe(SECRET_NAME);
      const v = SECRET_PLACEHOLDERS[ref.key];
      if (v === undefined) throw new Error(`${c.name}: ${e.name} from unknown secret key ${ref.key}`);
      env[e.name] = v;
    } else if (e.valueFrom?.configMapKeyRef) {
      const ref = e.valueFrom.configMapKeyRef;
      const v = configMap(ref.name)[ref.key];
      if (v === undefined) throw new Error(`${c.name}: ${e.name} from missing key ${ref.name}/${ref.key}`);
      env[e.name] = v;
    } else throw new Error(`${c.name}: ${e.name} has neither a value nor a reference`);
  }
  return env;
}

/** The file a `dist/…js` path is compiled from, by the tsconfig of its package (rootDir → outDir). */
function sourceOfDist(distPath: string): string {
  const m = /^(.*?)\/dist\/(.+)\.js$/.exec(distPath);
  if (!m) throw new Error(`${distPath} is not a dist/ path`);
  const [, pkg, rest] = m as unknown as [string, string, string];
  const tsconfigs = ['tsconfig.build.json', 'tsconfig.json'].map((f) => join(ROOT, pkg, f));
  const tsconfig = tsconfigs.find((f) => existsSync(f));
  if (!tsconfig) throw new Error(`${pkg}: no tsconfig`);
  const opts = (JSON.parse(readFileSync(tsconfig, 'utf8')) as { compilerOptions: Record<string, string> })
    .compilerOptions;
  expect(opts.outDir, `${tsconfig} outDir`).toBe('dist');
  // `pnpm build` is `tsc -b tsconfig.build.json`: the package must be one of its references.
  const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as {
    references: { path: string }[];
  };
  const referenced = build.references.map((r) => r.path.replace(/\/tsconfig\.build\.json$/, ''));
  expect(referenced, `tsconfig.build.json references ${pkg}`).toContain(pkg);
  return join(ROOT, pkg, opts.rootDir!, `${rest}.ts`);
}

describe.each([
  ['base', base],
  ['overlays/example', overlay],
])('infra/k8s/%s', (_name, objects) => {
  it('renders objects that all validate against the Kubernetes and KEDA schemas', () => {
    expect(objects.length).toBeGreaterThan(10);
    for (const o of objects) {
      const Model = MODELS[`${o.apiVersion}/${o.kind}`];
      if (!Model) throw new Error(`no schema for ${o.apiVersion} ${o.kind} (${o.metadata.name})`);
      expect(() => new Model(o as never).validate(), `${o.kind} ${o.metadata.name}`).not.toThrow();
    }
    const ids = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(ids).size, 'no two objects of one kind share a name').toBe(ids.length);
  });

  it('gives every role a Deployment with probes, resources, a grace period past its drain and a PDB', () => {
    for (const [role, spec] of Object.entries(ROLES)) {
      const d = named(objects, 'Deployment', `agent-saga-${role}`);
      const pod = podSpecOf(d)!;
      const [c, ...others] = containersOf(d);
      expect(others, role).toEqual([]);
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe'] as const) {
        const p = c![probe] as { httpGet?: { path: string; port: string } } | undefined;
        expect(p?.httpGet, `${role} ${probe}`).toBeDefined();
        // The port is one the container declares, by name.
        expect(
          c!.ports?.map((x) => x.name),
          `${role} ${probe} port`,
        ).toContain(p!.httpGet!.port);
        // Liveness never follows a dependency: /healthz only.
        if (probe !== 'readinessProbe') expect(p!.httpGet!.path, `${role} ${probe}`).toBe('/healthz');
      }
      const ready = (c!.readinessProbe as { httpGet: { path: string } }).httpGet.path;
      // Every role but the gateway serves /readyz (the gateway holds no pool: /healthz is all it has).
      expect(ready, role).toBe(role === 'mcp-gateway' ? '/healthz' : '/readyz');

      const res = c!.resources as { requests?: Record<string, string>; limits?: Record<string, string> };
      expect(
        res.requests?.cpu && res.requests.memory && res.limits?.memory,
        `${role} resources`,
      ).toBeTruthy();

      const env = environmentOf(c!, objects);
      const parsed = spec.schema.safeParse(env);
      if (!parsed.success)
        throw new Error(
          `${role}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        );
      const config = parsed.data as Record<string, number>;
      const graceMs = (pod.terminationGracePeriodSeconds as number) * 1000;
      expect(graceMs, `${role} grace period`).toBeGreaterThan(spec.drainMs(config));
      for (const [key, portName] of Object.entries(spec.ports)) {
        const port = c!.ports!.find((p) => p.name === portName);
        expect(port?.containerPort, `${role} ${key}`).toBe(config[key]);
      }

      const pdbs = objectsOf(objects, 'PodDisruptionBudget').filter((p) => {
        const sel = (p.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
        const labels = (d.spec as { template: { metadata: { labels: Record<string, string> } } }).template
          .metadata.labels;
        return Object.entries(sel).every(([k, v]) => labels[k] === v);
      });
      expect(
        pdbs.map((p) => p.metadata.name),
        `${role} PDB`,
      ).toEqual([`agent-saga-${role}`]);
    }
  });

  it('sets only variables each role reads, and requires nothing the manifests leave out', () => {
    const known = new Set(
      [...Object.values(ROLES).map((r) => r.schema), CLI_SCHEMA].flatMap((s) => Object.keys(s.shape)),
    );
    for (const cm of objectsOf(objects, 'ConfigMap'))
      for (const key of Object.keys(cm.data as Record<string, string>))
        expect(known.has(key), `ConfigMap ${cm.metadata.name}: ${key} is read by no role`).toBe(true);
    for (const [role, spec] of Object.entries(ROLES)) {
      const [c] = containersOf(named(objects, 'Deployment', `agent-saga-${role}`));
      for (const e of c!.env ?? [])
        expect(Object.keys(spec.schema.shape), `${role}: ${e.name} is not read by its config`).toContain(
          e.name,
        );
      // A required variable: the parser refuses the role without it.
      const required = Object.entries(spec.schema.shape)
        .filter(([, field]) => !(field as z.ZodType).safeParse(undefined).success)
        .map(([key]) => key);
      const env = environmentOf(c!, objects);
      for (const key of required) expect(env[key], `${role}: required ${key}`).toBeDefined();
    }
    for (const c of [
      ...containersOf(named(objects, 'Job', 'agent-saga-migrate')),
      ...objectsOf(objects, 'Deployment').flatMap(initContainersOf),
    ]) {
      const parsed = CLI_SCHEMA.safeParse(environmentOf(c, objects));
      expect(parsed.success, `${c.name}: the CLI's environment`).toBe(true);
    }
  });

  it('runs every role compiled, with the role heap flags, from files `pnpm build` produces', () => {
    const pods = [...objectsOf(objects, 'Deployment'), ...objectsOf(objects, 'Job')];
    const scripts = new Set<string>();
    for (const o of pods)
      for (const c of [...containersOf(o), ...initContainersOf(o)]) {
        const line = (c.command ?? []).join(' ');
        const script = /(\S+\/dist\/\S+\.js)/.exec(line)?.[1];
        expect(script, `${o.metadata.name}/${c.name} runs a dist/ file`).toBeDefined();
        expect(
          line.startsWith('node --conditions=agent-saga-dist') ||
            line.includes('until node --conditions=agent-saga-dist'),
          line,
        ).toBe(true);
        scripts.add(script!);
        if (c.name !== 'migrate' && c.name !== 'wait-for-schema')
          expect(c.command, `${c.name}: ROLE_NODE_FLAGS`).toEqual(['node', ...ROLE_NODE_FLAGS, script]);
      }
    expect([...scripts].sort()).toEqual(
      [
        'packages/cli/dist/main.js',
        'services/compensator/dist/bin/compensator.js',
        'services/dispatcher/dist/bin/api.js',
        'services/dispatcher/dist/bin/executor.js',
        'services/dispatcher/dist/bin/relay.js',
        'services/mcp-gateway/dist/bin/mcp-gateway.js',
        'services/reconciler/dist/bin/reconciler.js',
      ].sort(),
    );
    for (const s of scripts) expect(existsSync(sourceOfDist(s)), `${s} is compiled from a source`).toBe(true);
    // The tool module of the ConfigMap, compiled by the image's build (examples/tsconfig.build.json).
    const tools = (named(objects, 'ConfigMap', 'agent-saga-config').data as Record<string, string>)
      .SAGA_TOOLS!;
    expect(existsSync(sourceOfDist(relative('/app', tools)))).toBe(true);
  });

  it('runs every container as non-root, read-only, without privilege escalation', () => {
    for (const o of [...objectsOf(objects, 'Deployment'), ...objectsOf(objects, 'Job')]) {
      const pod = podSpecOf(o)!;
      const sc = pod.securityContext as Record<string, unknown>;
      expect(sc.runAsNonRoot, o.metadata.name).toBe(true);
      expect(pod.automountServiceAccountToken, o.metadata.name).toBe(false);
      for (const c of [...containersOf(o), ...initContainersOf(o)]) {
        expect(c.securityContext, `${o.metadata.name}/${c.name}`).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
      }
    }
  });

  it('references secrets and never carries them', () => {
    expect(objectsOf(objects, 'Secret')).toEqual([]);
    for (const o of [...objectsOf(objects, 'Deployment'), ...objectsOf(objects, 'Job')])
      for (const c of [...containersOf(o), ...initContainersOf(o)])
        for (const e of c.env ?? [])
          if (e.name in SECRET_PLACEHOLDERS)
            expect(e.valueFrom?.secretKeyRef, `${c.name}: ${e.name} from the Secret`).toBeDefined();
    for (const cm of objectsOf(objects, 'ConfigMap'))
      for (const key of Object.keys(SECRET_PLACEHOLDERS))
        expect(Object.keys(cm.data as object), `ConfigMap ${cm.metadata.name}`).not.toContain(key);
  });
});

/** Whether `kubectl` (with its built-in kustomize) is installed here. */
const HAVE_KUBECTL = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;

describe('the renderer', () => {
  // Where kubectl is installed, the renderer must agree with kustomize itself, object for object.
  it.skipIf(!HAVE_KUBECTL).each(['base', 'overlays/example'])(
    'renders %s as `kubectl kustomize` does',
    (dir) => {
      const out = execFileSync('kubectl', ['kustomize', join(K8S, dir)], { encoding: 'utf8' });
      const real = parseAllDocuments(out).map((d) => d.toJS() as K8sObject);
      const key = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;
      const sorted = (list: readonly K8sObject[]) =>
        [...list]
          .sort((a, b) => key(a).localeCompare(key(b)))
          .map((o) => JSON.parse(JSON.stringify(o)) as unknown);
      expect(sorted(renderKustomization(join(K8S, dir)))).toEqual(sorted(real));
    },
  );

  it('refuses a kustomization field it does not render', () => {
    expect(() => renderKustomization(join(import.meta.dirname, 'fixtures/k8s-unsupported'))).toThrow(
      /field configMapGenerator is not rendered/,
    );
  });
});

describe('the example overlay', () => {
  it('sets the namespace, the image and the replicas of the pools KEDA does not scale', () => {
    for (const o of overlay)
      if (o.kind !== 'Namespace')
        expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBe('agent-saga');
    for (const o of [...objectsOf(overlay, 'Deployment'), ...objectsOf(overlay, 'Job')])
      for (const c of [...containersOf(o), ...initContainersOf(o)])
        expect(c.image, `${o.metadata.name}/${c.name}`).toBe('registry.example.com/agent-saga:0.1.0');
    const replicas = (name: string) =>
      (named(overlay, 'Deployment', name).spec as { replicas: number }).replicas;
    expect(replicas('agent-saga-api')).toBe(3);
    const scaled = objectsOf(overlay, 'ScaledObject').map(
      (s) => (s.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name,
    );
    expect(scaled.sort()).toEqual(['agent-saga-compensator', 'agent-saga-executor', 'agent-saga-reconciler']);
    // Retention on: the reconciler's parser reads the age from the patched ConfigMap.
    const [reconciler] = containersOf(named(overlay, 'Deployment', 'agent-saga-reconciler'));
    const config = reconcilerConfigSchema.parse(environmentOf(reconciler!, overlay));
    expect(config.SAGA_PRUNE_OLDER_THAN).toBe(30 * 86_400_000);
  });

  it('scales on metrics the roles export', () => {
    const sources = [
      'services/dispatcher/src/metrics',
      'services/compensator/src/metrics',
      'packages/saga-core/src/metrics',
    ].flatMap((dir) => readdirSync(join(ROOT, dir)).map((f) => readFileSync(join(ROOT, dir, f), 'utf8')));
    const exported = (name: string) => sources.some((s) => s.includes(`'${name}'`));
    for (const s of objectsOf(overlay, 'ScaledObject')) {
      const [trigger, ...more] = (
        s.spec as { triggers: { type: string; metadata: Record<string, string> }[] }
      ).triggers;
      expect(more, s.metadata.name).toEqual([]);
      expect(trigger!.type).toBe('prometheus');
      const metrics = trigger!.metadata.query!.match(/saga_[a-z_]+/g) ?? [];
      expect(metrics.length, s.metadata.name).toBeGreaterThan(0);
      for (const m of metrics)
        expect(exported(m), `${s.metadata.name}: ${m} is exported by a role`).toBe(true);
      expect(Number(trigger!.metadata.threshold)).toBeGreaterThan(0);
    }
  });
});
