/**
 * Plain-text tables for the operator commands (`runs list`, `approvals list`, …): one header row, columns
 * padded to their widest cell, no borders, so the output stays greppable and `cut`-able. Commands that
 * print tables also take `--json`, which prints the rows themselves instead.
 */
export interface Column<Row> {
  readonly header: string;
  readonly value: (row: Row) => string | number | boolean | null | undefined;
  /** Numbers read best right-aligned. */
  readonly align?: 'left' | 'right';
}

/** Two spaces between columns: wide enough to read, narrow enough for 80 columns. */
const GAP = '  ';

export function formatTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string {
  const cells = rows.map((row) => columns.map((c) => cellText(c.value(row))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (texts: readonly string[]) =>
    texts
      .map((t, i) => (columns[i]!.align === 'right' ? t.padStart(widths[i]!) : t.padEnd(widths[i]!)))
      .join(GAP)
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n') + '\n';
}

function cellText(v: string | number | boolean | null | undefined): string {
  if (v === null || v === undefined) return '-';
  // A cell is one line: a newline in a status reason would break every column after it.
  return String(v).replace(/\s+/g, ' ');
}
