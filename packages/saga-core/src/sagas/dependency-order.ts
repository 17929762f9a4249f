/**
 * The dependency order of a saga's steps: a step stands after every step it depends on, directly or not.
 * A step that declares no `dependsOn` depends on every step declared before it (the runtime's default for
 * a call, too); `dependsOn: []` depends on nothing.
 */

/** A step as the graph sees it: its id and the ids it depends on, defaults resolved. */
export interface DependencyNode {
  readonly id: string;
  readonly dependsOn: readonly string[];
}

/** The ids each step depends on: as declared, or every earlier step's when it declares none. */
export function resolveDependsOn(
  steps: readonly { readonly id: string; readonly dependsOn?: readonly string[] | undefined }[],
): string[][] {
  return steps.map((s, i) => (s.dependsOn ? [...s.dependsOn] : steps.slice(0, i).map((e) => e.id)));
}

/**
 * A cycle of the graph, as the ids on it with the first repeated at the end, starting from the step that
 * is declared first among them; null when there is none. Every dependency must name a step of the graph.
 */
export function findCycle(nodes: readonly DependencyNode[]): string[] | null {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const order = new Map(nodes.map((n, i) => [n.id, i]));
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (id: string): string[] | null => {
    if (onPath.has(id)) return path.slice(path.indexOf(id));
    if (done.has(id)) return null;
    path.push(id);
    onPath.add(id);
    for (const dep of byId.get(id)?.dependsOn ?? []) {
      const cycle = visit(dep);
      if (cycle) return cycle;
    }
    path.pop();
    onPath.delete(id);
    done.add(id);
    return null;
  };
  for (const n of nodes) {
    const cycle = visit(n.id);
    if (!cycle) continue;
    const first = cycle.reduce((a, b) => ((order.get(b) ?? 0) < (order.get(a) ?? 0) ? b : a));
    const at = cycle.indexOf(first);
    const rotated = [...cycle.slice(at), ...cycle.slice(0, at)];
    return [...rotated, first];
  }
  return null;
}

/** Every step `id` depends on, directly or not (the graph must have no cycle). */
export function ancestorsOf(nodes: readonly DependencyNode[], id: string): ReadonlySet<string> {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const seen = new Set<string>();
  const stack = [...(byId.get(id)?.dependsOn ?? [])];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(byId.get(next)?.dependsOn ?? []));
  }
  return seen;
}
