/**
 * The tables `pnpm simulate` prints: totals, then per fault mode and per policy, the harnesses side by
 * side. Counts of episodes; `once` also as a share of the row. Columns: `n` episodes, `dup` with a
 * duplicate net effect, `lost` with a lost effect, `once` exactly once, `wrong` with a wrong compensation,
 * `lied` where the agent reported success and was wrong.
 */
import type { HarnessTotals, SimulationSummary } from './summarize-grades.js';
import type { Harness } from './simulate-options.js';

const COLUMNS: readonly [keyof HarnessTotals, string][] = [
  ['episodes', 'n'],
  ['duplicates', 'dup'],
  ['lost', 'lost'],
  ['exactlyOnce', 'once'],
  ['wrongCompensations', 'wrong'],
  ['reportedSuccessWhenWrong', 'lied'],
];

/**
 * A share to two decimals, rounded down: the target is 99.9 %, and 8,479 of 8,483 rounded to one decimal
 * printed "100.0%" beside four misses. Rounded down, only all of them is 100.00%.
 */
const pct = (n: number, of: number) =>
  of === 0 ? '-' : `${(Math.floor((10_000 * n) / of) / 100).toFixed(2)}%`;

function cells(t: HarnessTotals | undefined): string[] {
  if (!t) return COLUMNS.map(() => '-');
  return COLUMNS.map(([k]) => (k === 'exactlyOnce' ? `${t[k]} (${pct(t[k], t.episodes)})` : String(t[k])));
}

function table(
  title: string,
  rows: readonly [string, Partial<Record<Harness, HarnessTotals>>][],
  harnesses: readonly Harness[],
): string[] {
  const header = [title, ...harnesses.flatMap(() => COLUMNS.map(([, label]) => label))];
  const body = rows.map(([name, byH]) => [name, ...harnesses.flatMap((h) => cells(byH[h]))]);
  const all = [header, ...body];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  // A harness's name sits over its first column and may be wider than it: pad the group instead.
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const groupLine = harnesses
    .map((h, hi) => {
      const span = COLUMNS.reduce((sum, _, ci) => sum + (widths[1 + hi * COLUMNS.length + ci] ?? 0) + 2, 0);
      return h.padEnd(span);
    })
    .join('');

  return [`${''.padEnd((widths[0] ?? 0) + 2)}${groupLine}`.trimEnd(), line(header), ...body.map(line), ''];
}

export function formatSummary(s: SimulationSummary, harnesses: readonly Harness[]): string {
  const out: string[] = [
    `pnpm simulate: ${s.episodes} episodes, seed ${s.seed}, ${(s.durationMs / 1000).toFixed(1)} s`,
    '',
    ...table('totals', [['all episodes', s.totals]], harnesses),
    ...table('fault mode', Object.entries(s.byFaultMode), harnesses),
    ...table('policy', Object.entries(s.byPolicy), harnesses),
  ];
  for (const h of harnesses) {
    const d = s.details[h];
    if (!d) continue;
    out.push(
      `${h}: exactly once in ${d.exactlyOnceOfCanSucceed} of ${d.canSucceed} episodes that can succeed ` +
        `(${pct(d.exactlyOnceOfCanSucceed, d.canSucceed)}); settled in ${(d.settledMsMedian / 1000).toFixed(1)} s median, ` +
        `${(d.settledMsP95 / 1000).toFixed(1)} s p95`,
    );
    const fired = Object.entries(d.faultsFired)
      .filter(([mode]) => mode !== 'none')
      .map(([mode, f]) => `${mode} ${f?.fired ?? 0}/${f?.drawn ?? 0}`);
    out.push(`  faults that hit a request (episodes): ${fired.join(', ')}`);
  }
  return out.join('\n');
}
