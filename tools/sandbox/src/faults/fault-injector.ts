import { randomUUID } from 'node:crypto';
import type { Vendor } from '../vendors.js';
import type { FaultRule, FaultSpec } from './fault-rule.js';
import { compilePathPattern } from './path-pattern.js';

/**
 * The faults currently armed, shared by the four vendor servers. `match` is called once per incoming
 * request: every rule the request matches counts it, and the first rule that fires on it (its nth match,
 * or every match) is returned. A request is hit by at most one fault.
 */
export class FaultInjector {
  readonly #rules: { rule: FaultRule; path: RegExp }[] = [];

  add(spec: FaultSpec): FaultRule {
    const rule: FaultRule = { ...spec, id: `flt_${randomUUID()}`, matched: 0, fired: 0, processed: 0 };
    this.#rules.push({ rule, path: compilePathPattern(spec.path) });
    return rule;
  }

  list(): readonly FaultRule[] {
    return this.#rules.map((r) => ({ ...r.rule }));
  }

  remove(id: string): boolean {
    const index = this.#rules.findIndex((r) => r.rule.id === id);
    if (index < 0) return false;
    this.#rules.splice(index, 1);
    return true;
  }

  clear(): void {
    this.#rules.length = 0;
  }

  /** Whether some armed rule of `vendor` matches only on content (`contains`): the body must be read. */
  hasContentRules(vendor: Vendor): boolean {
    return this.#rules.some((r) => r.rule.vendor === vendor && r.rule.contains !== undefined);
  }

  /**
   * Counts the request against every matching rule; returns the rule that hits it, if any. Without `text`
   * only rules without `contains` are considered (matched as the request arrives); with `text` (the URL
   * with its query string and the raw body) only rules with `contains` that occur in it.
   */
  match(vendor: Vendor, method: string, path: string, text?: string): FaultRule | undefined {
    let hit: FaultRule | undefined;
    for (const { rule, path: pattern } of this.#rules) {
      if (rule.vendor !== vendor) continue;
      if (text === undefined ? rule.contains !== undefined : !containsIn(rule, text)) continue;
      if (rule.method !== '*' && rule.method !== method.toUpperCase()) continue;
      if (!pattern.test(path)) continue;
      rule.matched += 1;
      const fires = rule.every === true || rule.matched === rule.nth;
      if (fires && hit === undefined) {
        rule.fired += 1;
        hit = rule;
      }
    }
    return hit;
  }
}

/** Whether a content rule's text occurs in the request's URL and body (false for a rule without one). */
function containsIn(rule: FaultRule, text: string): boolean {
  return rule.contains !== undefined && text.includes(rule.contains);
}
