import type { GrowthTable } from './growth.js';
import { fmt } from './runner.js';

/** One line of a panel: a store or a quantile, a point per size. */
interface Series {
  label: string;
  points: Array<[size: number, value: number]>;
  dashed?: boolean;
}

/** One small chart: a figure against the size, both axes logarithmic. */
interface Panel {
  title: string;
  unit: string;
  series: Series[];
}

const COLORS = ['#1f6feb', '#d4761c', '#2da44e', '#8250df', '#8c959f'];
const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);

/** Points of `key` against `sizeKey` for the rows that `keep` selects (failed rows have no figures and drop out). */
function series(
  t: GrowthTable,
  label: string,
  sizeKey: string,
  key: string,
  keep: (raw: Record<string, unknown>) => boolean,
  dashed = false,
): Series {
  const points: Array<[number, number]> = [];
  for (const { raw } of t.rows) {
    const size = num(raw[sizeKey]);
    const value = num(raw[key]);
    if (keep(raw) && size !== undefined && value !== undefined) points.push([size, value]);
  }
  return { label, points, dashed };
}

/** The panels worth a curve: heap and renewal calls per store (scenario 7), hand-off times (scenario 8). */
export function growthPanels(tables: readonly GrowthTable[]): Panel[] {
  const panels: Panel[] = [];
  for (const t of tables) {
    if (/^s?7/.test(t.scenario)) {
      const stores = [...new Set(t.rows.map((r) => String(r.raw.store)))];
      const of = (store: string) => (raw: Record<string, unknown>) => raw.store === store;
      panels.push({
        title: 'Heap per held lock',
        unit: 'bytes',
        series: stores.map((s) => series(t, s, 'held', 'heapPerLockBytes', of(s))),
      });
      panels.push({
        title: 'Renewal store calls per second',
        unit: 'calls/s',
        series: [
          ...stores.map((s) => series(t, s, 'held', 'storeCallsPerSecond', of(s))),
          series(t, 'one call per lock', 'held', 'perLockCallsPerSecond', of(stores[0] ?? ''), true),
          series(t, 'batched target', 'held', 'batchedTargetCallsPerSecond', of(stores[0] ?? ''), true),
        ],
      });
    } else if (/^s?8/.test(t.scenario)) {
      const all = () => true;
      panels.push({
        title: 'Hand-off time against waiters',
        unit: 'ms',
        series: [
          series(t, 'p50', 'waiters', 'handOffP50Ms', all),
          series(t, 'p99', 'waiters', 'handOffP99Ms', all),
          series(t, 'cross-process p99', 'waiters', 'crossProcessP99Ms', all),
        ],
      });
    }
  }
  return panels.filter((p) => p.series.some((s) => s.points.length > 0));
}

/**
 * A hand-written SVG of line charts, one panel per figure, the size on a
 * log axis and the figure on a log axis: a flat line is a cost that does not
 * grow, a line parallel to "one call per lock" grows with the work.
 */
export function growthChart(tables: readonly GrowthTable[], subtitle: string): string | undefined {
  const panels = growthPanels(tables);
  if (panels.length === 0) return undefined;
  const panelW = 480;
  const panelH = 230;
  const cols = 2;
  const rowsN = Math.ceil(panels.length / cols);
  const width = panelW * cols + 20;
  const height = 60 + rowsN * (panelH + 40);
  const parts: string[] = [
    `<text x="10" y="22" class="t">How the cost grows with the work</text>`,
    `<text x="10" y="40" class="s">${esc(subtitle)}</text>`,
  ];
  panels.forEach((panel, i) => {
    const x0 = 10 + (i % cols) * panelW + 60;
    const y0 = 60 + Math.floor(i / cols) * (panelH + 40) + 24;
    const w = panelW - 200;
    const h = panelH - 70;
    const pts = panel.series.flatMap((s) => s.points);
    const [xs, ys] = [pts.map((p) => p[0]), pts.map((p) => p[1])];
    const lx = (v: number, lo: number, hi: number) =>
      hi > lo ? (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) : 0.5;
    const [xLo, xHi] = [Math.min(...xs), Math.max(...xs)];
    const [yLo, yHi] = [Math.min(...ys) / 1.5, Math.max(...ys) * 1.5];
    const px = (v: number) => x0 + lx(v, xLo, xHi) * w;
    const py = (v: number) => y0 + h - lx(v, yLo, yHi) * h;
    parts.push(`<text x="${x0 - 50}" y="${y0 - 8}" class="h">${esc(panel.title)} (${esc(panel.unit)})</text>`);
    parts.push(`<rect x="${x0}" y="${y0}" width="${w}" height="${h}" class="frame"/>`);
    for (const size of [...new Set(xs)].sort((a, b) => a - b)) {
      parts.push(`<text x="${px(size)}" y="${y0 + h + 14}" class="a" text-anchor="middle">${fmt(size)}</text>`);
    }
    for (const v of [yLo * 1.5, Math.sqrt(yLo * yHi), yHi / 1.5]) {
      parts.push(`<text x="${x0 - 4}" y="${py(v) + 4}" class="a" text-anchor="end">${fmt(v, v < 10 ? 2 : 0)}</text>`);
    }
    panel.series.forEach((s, j) => {
      if (s.points.length === 0) return;
      const color = s.dashed ? '#8c959f' : COLORS[j % COLORS.length];
      const d = s.points
        .sort((a, b) => a[0] - b[0])
        .map(([sx, sy], k) => `${k ? 'L' : 'M'}${px(sx).toFixed(1)},${py(sy).toFixed(1)}`)
        .join(' ');
      parts.push(
        `<path d="${d}" fill="none" stroke="${color}" stroke-width="2"${s.dashed ? ` stroke-dasharray="${j % 2 ? '2 3' : '6 4'}"` : ''}/>`,
      );
      for (const [sx, sy] of s.points)
        parts.push(`<circle cx="${px(sx).toFixed(1)}" cy="${py(sy).toFixed(1)}" r="2.5" fill="${color}"/>`);
      parts.push(
        `<text x="${x0 + w + 6}" y="${y0 + 12 + j * 14}" class="a" style="fill:${color}">${esc(s.label)}</text>`,
      );
    });
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    '<style>.t{font-size:16px;font-weight:600}.s{font-size:12px;fill:#57606a}.h{font-size:13px;font-weight:600}.a{font-size:10px;fill:#57606a}.frame{fill:none;stroke:#d0d7de}</style>',
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
