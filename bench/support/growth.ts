/**
 * Tables of "how the cost grows": one row per size (and store) of a scaling
 * scenario (7 and 8), printed beside the main table and kept in the JSON.
 */
export interface GrowthTable {
  scenario: string;
  title: string;
  columns: string[];
  /** Cells as printed; `raw` keeps the numbers for the JSON. */
  rows: Array<{ cells: string[]; raw: Record<string, number | string> }>;
  notes: string[];
}

/** A markdown table, columns padded, with its notes under it. */
export function growthTable(t: GrowthTable): string {
  const lines = [t.columns, ...t.rows.map((r) => r.cells)];
  const widths = t.columns.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? '').length)));
  const line = (cells: string[]): string =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [
    `${t.scenario}: ${t.title}`,
    line(t.columns),
    `|${widths.map((w, i) => (i === 0 ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`,
    ...t.rows.map((r) => line(r.cells)),
    ...t.notes.map((n) => `- ${n}`),
  ].join('\n');
}

/** Parses `--sizes=10,100` (default `fallback`). */
export function sizesFlag(argv: readonly string[], fallback: readonly number[]): number[] {
  const raw = argv.find((a) => a.startsWith('--sizes='))?.slice(8);
  if (!raw) return [...fallback];
  const sizes = raw.split(',').map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--sizes wants positive integers, got "${raw}"`);
  return sizes;
}
