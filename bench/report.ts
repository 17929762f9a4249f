import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { BenchResult } from './bench-result.js';
import type { LatencySummary } from './latency-summary.js';

const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(x < 10 ? 2 : 1)} ms` : '—');
const num = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '—');
const int = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
const lat = (l: LatencySummary) => `${ms(l.p50)} / ${ms(l.p99)}`;

/** Prints aligned rows: the first column left-aligned, the rest right-aligned. */
function table(title: string, header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  const line = (r: readonly string[]) =>
    r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  const rule = widths.map((w) => '─'.repeat(w)).join('  ');
  return [`\n${title}`, line(header), rule, ...rows.map(line)].join('\n');
}

/** The human-readable report. */
export function formatReport(r: BenchResult): string {
  const m = r.machine;
  const s = r.sustained;
  const b = r.baseline;
  const out: string[] = [];
  out.push(
    `agent-saga bench, ${r.startedAt} (${num(r.durationSeconds, 0)} s)`,
    `machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB; Node ${m.node}; PostgreSQL ${m.postgres}; Redis ${m.redis}`,
    `postgres: ${Object.entries(m.postgresSettings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
    `settings: ${Object.entries(r.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
  );
  out.push(
    table(
      `Unloaded: ${r.unloaded.calls} sequential calls of a no-op reversible tool (p50 / p99)`,
      ['figure', 'p50 / p99', 'p90', 'max'],
      [
        [
          'client call → CONFIRMED answer',
          lat(r.unloaded.client),
          ms(r.unloaded.client.p90),
          ms(r.unloaded.client.max),
        ],
        ...sagaLogRows(r.unloaded.sagaLog),
      ],
    ),
  );
  out.push(
    table(
      `Sustained: ${s.concurrency} calls in flight for ${num(s.windowSeconds, 1)} s, vs bare BullMQ + 1 INSERT per job`,
      ['figure', 'agent-saga', 'BullMQ baseline', 'ratio'],
      [
        ['durable calls (jobs) / s', int(s.callsPerSecond), int(b.jobsPerSecond), num(r.ratios.throughput)],
        ['end-to-end p50', ms(s.client.p50), ms(b.latency.p50), num(r.ratios.p50)],
        ['end-to-end p99', ms(s.client.p99), ms(b.latency.p99), num(r.ratios.p99)],
        ['intent → CONFIRMED p50 / p99', lat(s.sagaLog.intentToConfirmed), '', ''],
        ['  intent → claim p50 / p99', lat(s.sagaLog.intentToClaim), '', ''],
        ['  claim → CONFIRMED p50 / p99', lat(s.sagaLog.claimToConfirmed), '', ''],
        ['commits / call (xact_commit, incl. read-only)', num(s.pg.commits), num(b.pg.commits), ''],
        [
          'write transactions / call (net)',
          num(s.pg.writeXactsNet),
          num(b.pg.writeXactsNet),
          num(r.ratios.writeXacts),
        ],
        [
          'WAL bytes / call (insert position, net)',
          int(s.pg.walBytesNet),
          int(b.pg.walBytesNet),
          num(r.ratios.walBytes),
        ],
        ['WAL bytes / call (pg_stat_wal)', int(s.pg.walBytesStat), int(b.pg.walBytesStat), ''],
        ['WAL records / call', num(s.pg.walRecords, 1), num(b.pg.walRecords, 1), ''],
        ['WAL full-page images / call', num(s.pg.walFpi), num(b.pg.walFpi), ''],
        ['WAL flushes (fsync) / call', num(s.pg.walSyncs), num(b.pg.walSyncs), ''],
        ['errors', String(s.errors), String(b.errors), ''],
      ],
    ),
  );
  out.push(sideBySideTable(r));
  out.push(
    table(
      `Sweep cost: median of each periodic query with ${int(r.sweepCost.smallRows)} and ${int(r.sweepCost.largeRows)} settled steps, interleaved; ratio: the median of the rounds' large/small (target 0.8 – 1.2)`,
      ['query', int(r.sweepCost.smallRows), int(r.sweepCost.largeRows), 'ratio'],
      r.sweepCost.rows.map((q) => [q.query, ms(q.smallMs), ms(q.largeMs), num(q.ratio)]),
    ),
    `(bulk load of the settled steps: ${num(r.sweepCost.loadSeconds, 1)} s)`,
  );
  const u = r.unwind;
  out.push(
    '',
    `Unwind: ${int(u.runs)} one-step runs, compensator concurrency ${u.concurrency}: ` +
      `${int(u.runsPerSecond)} runs unwound / s (first to last COMPENSATED), ${num(u.wallSeconds, 1)} s from its start` +
      (u.notCompensated > 0
        ? `; ${u.notCompensated} runs did NOT end COMPENSATED (${JSON.stringify(u.endStatuses)})`
        : ''),
  );
  out.push(
    table(
      'Rows written per call (bench schema, pg_stat_user_tables)',
      ['table', 'inserts', 'updates'],
      Object.entries({ ...s.pg.rows, ...b.pg.rows }).map(([t, d]) => [t, num(d.ins), num(d.upd)]),
    ),
  );
  out.push(walTable(r));
  out.push(cpuTable(r));
  out.push(memoryTable(r));
  out.push(
    table(
      'Targets (issues 2 and 10; printed, not asserted)',
      ['figure', 'target', 'measured', 'met'],
      r.targets.map((t) => [t.figure, t.target, `${num(t.measured)} ${t.unit}`, t.met ? 'yes' : 'NO']),
    ),
  );
  const bg = s.pg.background;
  out.push(
    '',
    `background while quiet (other sessions on the server): ${num(bg.writeXactsPerS, 1)} write xacts/s, ` +
      `${int(bg.walBytesPerS)} WAL B/s, ${num(bg.xactCommitPerS, 1)} commits/s; "net" figures subtract it.`,
    'commits/call counts every committed transaction in this database (pg_stat_database), read-only',
    'SELECTs included and other sessions too; write transactions and WAL positions are exact and cluster-wide.',
  );
  if (s.firstError) out.push(`first agent-saga error: ${s.firstError}`);
  if (b.firstError) out.push(`first baseline error: ${b.firstError}`);
  const unclean = r.shutdown.filter((x) => x.code !== 0 || x.killed);
  if (unclean.length > 0) out.push(`processes that did not drain cleanly: ${JSON.stringify(unclean)}`);
  return out.join('\n');
}

/** The one table: every system's work/s, latency and Postgres cost per unit of work, and agent-saga's ratios. */
function sideBySideTable(r: BenchResult): string {
  const pg = (x: number, digits = 2) => (Number.isFinite(x) ? num(x, digits) : '—');
  const rows = r.sideBySide.map((x) => [
    x.system,
    x.error ? 'failed' : int(x.workPerSecond),
    Number.isFinite(x.p50Ms) ? `${ms(x.p50Ms)} / ${ms(x.p99Ms)}` : '—',
    pg(x.commits),
    pg(x.writeXacts),
    pg(x.walFlushes),
    Number.isFinite(x.walBytes) ? int(x.walBytes) : '—',
    num(x.sagaRatio.workPerSecond),
    pg(x.sagaRatio.walFlushes),
    pg(x.sagaRatio.walBytes),
  ]);
  const failed = r.sideBySide.filter((x) => x.error).map((x) => `  ${x.system}: ${x.error}`);
  return [
    table(
      `Side by side, same run: work per second and Postgres cost per unit of work (${r.sustained.concurrency} in flight)`,
      [
        'system',
        'work/s',
        'p50 / p99',
        'commits',
        'write xacts',
        'WAL flushes',
        'WAL B',
        'saga ÷ it: work/s',
        'flushes',
        'WAL B',
      ],
      rows,
    ),
    'units: agent-saga a durable call, DBOS a one-step workflow, Restate a one-step invocation, queues a job;',
    'drains: jobs added in bulk then drained (rate over the drain, costs over add + drain); "—": not on Postgres or n/a.',
    ...(failed.length ? ['failed peers:', ...failed] : []),
  ].join('\n');
}

/** CPU per call by process over each sustained window, and how busy the machine's cores were. */
function memoryTable(r: BenchResult): string {
  const m = Object.entries(r.sustained.roleMemory);
  if (m.length === 0) return '\nMemory by role: /proc not available on this machine';
  return table(
    'Resident memory of each role right after the sustained window, and its peak (MiB)',
    ['role', 'RSS', 'peak (VmHWM)'],
    m.map(([name, v]) => [name, v.rssMiB.toFixed(0), v.peakMiB.toFixed(0)]),
  );
}

function cpuTable(r: BenchResult): string {
  const s = r.sustained;
  const b = r.baseline;
  if (!s.cpu.available) return '\nCPU by process: /proc not available on this machine';
  const names = [...new Set([...Object.keys(s.cpu.cpuSeconds), ...Object.keys(b.cpu.cpuSeconds)])];
  const perCall = (secs: number | undefined, calls: number) =>
    secs === undefined ? '' : `${((secs * 1000) / calls).toFixed(3)} ms`;
  const share = (secs: number | undefined, u: BenchResult['baseline']['cpu']) =>
    secs === undefined ? '' : `${((secs / (u.seconds * u.cores)) * 100).toFixed(0)} %`;
  return table(
    `CPU time per call by process (share of all ${s.cpu.cores} cores over the window)`,
    ['process', 'agent-saga', 'share', 'baseline', 'share'],
    [
      ...names.map((n) => [
        n,
        perCall(s.cpu.cpuSeconds[n], s.pg.calls),
        share(s.cpu.cpuSeconds[n], s.cpu),
        perCall(b.cpu.cpuSeconds[n], b.pg.calls),
        share(b.cpu.cpuSeconds[n], b.cpu),
      ]),
      [
        'machine busy',
        '',
        `${(s.cpu.machineBusyShare * 100).toFixed(0)} %`,
        '',
        `${(b.cpu.machineBusyShare * 100).toFixed(0)} %`,
      ],
    ],
  );
}

function sagaLogRows(l: BenchResult['unloaded']['sagaLog']): string[][] {
  return [
    [
      'intent commit → CONFIRMED (saga log)',
      lat(l.intentToConfirmed),
      ms(l.intentToConfirmed.p90),
      ms(l.intentToConfirmed.max),
    ],
    ['  intent → executor claim', lat(l.intentToClaim), ms(l.intentToClaim.p90), ms(l.intentToClaim.max)],
    ['  claim → CONFIRMED', lat(l.claimToConfirmed), ms(l.claimToConfirmed.p90), ms(l.claimToConfirmed.max)],
  ];
}

/** Writes the result as JSON (pretty, for diffs between runs), creating the directory. */
export async function writeResultJson(path: string, r: BenchResult): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(r, null, 2)}\n`);
}

/** Where the sustained window's WAL went, per call (wal-by-relation.ts), or how to see it. */
function walTable(r: BenchResult): string {
  const w = r.sustained.walByRelation;
  if (!w)
    return '\nWAL by relation: not read (needs pg_walinspect in the bench database: CREATE EXTENSION pg_walinspect)';
  // Why 12: the rows past it hold a few bytes per call between them.
  const shown = w.rows.slice(0, 12);
  const rest = w.rows.slice(12);
  const rows = shown.map((x) => [
    x.relation,
    x.record,
    num(x.recordsPerCall),
    int(x.bytesPerCall),
    int(x.avgBytes),
  ]);
  if (rest.length)
    rows.push([
      `(${rest.length} more)`,
      '',
      num(rest.reduce((s, x) => s + x.recordsPerCall, 0)),
      int(rest.reduce((s, x) => s + x.bytesPerCall, 0)),
      '',
    ]);
  rows.push(['every record, exact', '', num(w.recordsPerCall), int(w.bytesPerCall), '']);
  return table(
    `WAL per call of the sustained window by relation (pg_walinspect, ${int(w.calls)} calls)`,
    ['relation', 'record', 'records', 'bytes', 'avg bytes'],
    rows,
  );
}
