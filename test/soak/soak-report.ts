/**
 * The soak's verdict: a list of named checks, each passed or failed with the lines that explain it,
 * printed one per line (details indented under a failure, and under a pass when they are short), then the
 * plain last line `N passed, M failed`. `--json` adds the same as one JSON line before it.
 */
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  /** What was seen: on a failure, every offender (run, step, status, attempts, process output). */
  readonly details: readonly string[];
}

/** A check from a list of offenders: passed when there are none. */
export function checkNone(name: string, offenders: readonly string[], whenOk: readonly string[] = []): Check {
  return { name, ok: offenders.length === 0, details: offenders.length === 0 ? whenOk : offenders };
}

/** Why 40: enough offenders to see the pattern; the rest are counted, not listed. */
const MAX_DETAILS = 40;

/** Prints every check and the summary line; returns the number of failures. */
export function printReport(checks: readonly Check[], json: boolean, say: (line: string) => void): number {
  for (const c of checks) {
    say(`${c.ok ? 'PASS' : 'FAIL'}  ${c.name}`);
    const shown = c.details.slice(0, MAX_DETAILS);
    for (const d of shown)
      say(
        d
          .split('\n')
          .map((l) => `        ${l}`)
          .join('\n'),
      );
    if (c.details.length > shown.length) say(`        … and ${c.details.length - shown.length} more`);
  }
  const failed = checks.filter((c) => !c.ok).length;
  if (json) say(JSON.stringify({ checks, passed: checks.length - failed, failed }));
  say(`${checks.length - failed} passed, ${failed} failed`);
  return failed;
}
