import { describe, type Row } from './results.js';
import { SCENARIO_TITLES } from './report.js';
import { fmt } from './runner.js';

const COLORS = { ours: '#1f6feb', raw: '#8c959f', default: '#d4761c', tuned: '#f0b67a', reference: '#d0d7de' } as const;

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * A hand-written SVG bar chart: one block per scenario variant, bars scaled
 * to the fastest contender of the block, with the median and the min–max
 * range drawn as a whisker.
 */
export function chart(rows: Row[], subtitle: string): string {
  const width = 960;
  const labelW = 330;
  const barMax = width - labelW - 150;
  const barH = 16;
  const gap = 6;
  const parts: string[] = [];
  let y = 56;
  const groups: Array<{ title: string; rows: Row[]; value: (r: Row) => number; whiskers: boolean }> = [];
  const byKey = new Map<string, Row[]>();
  for (const r of rows) {
    if (r.skipped || r.samples.length === 0) continue;
    const key = `${r.scenario}|${r.variant}`;
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  for (const group of byKey.values()) {
    const first = group[0]!;
    const title = `${SCENARIO_TITLES[first.scenario] ?? first.scenario} — ${first.variant}`;
    groups.push({ title: `${title} (${first.unit})`, rows: group, value: (r) => r.median.throughput!, whiskers: true });
    if (group.some((r) => r.median.handOversPerSecond !== undefined)) {
      // The lock passing from one caller to another: what a FIFO lock does every section, and a barging one rarely.
      groups.push({
        title: `${title} (hand-overs between callers/s)`,
        rows: group,
        value: (r) => r.median.handOversPerSecond ?? 0,
        whiskers: false,
      });
    }
  }
  for (const group of groups) {
    parts.push(`<text x="10" y="${y}" class="h">${esc(group.title)}</text>`);
    y += 10;
    const top = Math.max(...group.rows.map((r) => (group.whiskers ? r.max : group.value(r))), 1e-9);
    for (const r of group.rows) {
      const color =
        r.kind === 'ours'
          ? COLORS.ours
          : r.kind === 'raw'
            ? COLORS.raw
            : r.kind === 'reference'
              ? COLORS.reference
              : r.retry === 'tuned'
                ? COLORS.tuned
                : COLORS.default;
      const v = group.value(r);
      const w = Math.max(1, (v / top) * barMax);
      const x1 = group.whiskers ? labelW + (r.max / top) * barMax : labelW + w;
      const cy = y + barH / 2;
      parts.push(
        `<text x="${labelW - 8}" y="${cy + 4}" text-anchor="end"${r.kind === 'ours' ? ' class="b"' : ''}>${esc(describe(r))}</text>`,
        `<rect x="${labelW}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${color}"/>`,
      );
      if (group.whiskers) {
        const x0 = labelW + (r.min / top) * barMax;
        parts.push(
          `<line x1="${x0.toFixed(1)}" x2="${x1.toFixed(1)}" y1="${cy}" y2="${cy}" stroke="#24292f" stroke-width="1"/>`,
        );
      }
      parts.push(`<text x="${(Math.max(labelW + w, x1) + 6).toFixed(1)}" y="${cy + 4}">${esc(fmt(v))}</text>`);
      y += barH + gap;
    }
    y += 18;
  }
  const legendY = 34;
  const legend = [
    ['nest-lock', COLORS.ours],
    ['raw baseline / undecorated', COLORS.raw],
    ['peer, default retry', COLORS.default],
    ['peer, 10 ms retry', COLORS.tuned],
    ['no lock (ceiling)', COLORS.reference],
  ]
    .map(
      ([name, color], i) =>
        `<rect x="${10 + i * 190}" y="${legendY - 10}" width="12" height="12" fill="${color}"/><text x="${28 + i * 190}" y="${legendY}">${esc(name!)}</text>`,
    )
    .join('');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}" font-family="-apple-system,Segoe UI,Helvetica,Arial,sans-serif" font-size="12">`,
    '<style>.h{font-weight:600;font-size:13px}.b{font-weight:600}text{fill:#24292f}</style>',
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="10" y="16" class="h">nest-lock benchmark — median of repeats, whisker = min–max; ${esc(subtitle)}</text>`,
    legend,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
