import { describe, target, type Row, type Target } from './results.js';
import { fmt } from './runner.js';

export const SCENARIO_TITLES: Record<string, string> = {
  s1: '1. Uncontended (Redis)',
  s2: '2. Parallel (Redis)',
  s3: '3. Contended (Redis)',
  s4: '4. In-memory',
  s5: '5. HTTP (Nest express, autocannon)',
  s6a: '6a. Uncontended (SQL)',
  s6b: '6b. Contended (SQL)',
};

const ratio = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? '-' : `${x.toFixed(2)}×`);
const ms = (x: number | undefined): string =>
  x === undefined || Number.isNaN(x) ? '-' : x < 10 ? x.toFixed(2) : x.toFixed(0);
const pc = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? '-' : `${(x * 100).toFixed(0)}%`);
const pct = (x: number): string => `±${((x / 2) * 100).toFixed(0)}%`;

function extra(r: Row): string {
  const m = r.median;
  if (r.scenario === 's3' || r.scenario === 's6b') {
    const parts = [];
    if (r.vsCeiling !== undefined) parts.push(`${ratio(r.vsCeiling)} ceiling`);
    if (!Number.isNaN(m.lockCommandsPerSection ?? NaN)) {
      parts.push(
        `${(m.lockCommandsPerSection ?? 0).toFixed(1)} cmd/sect (${(m.roundTripsPerSection ?? NaN).toFixed(1)} round trips)`,
      );
    }
    parts.push(
      `wait p50/p99/max ${ms(m.p50WaitMs)}/${ms(m.p99WaitMs)}/${ms(m.maxWaitMs)} ms, max ${(m.waitVsFifo ?? NaN).toFixed(2)}× FIFO (${ms(m.fifoWaitMs)} ms)`,
    );
    if (m.maxSectionsWaited !== undefined)
      parts.push(`sections waited p99/max ${fmt(m.p99SectionsWaited ?? NaN)}/${fmt(m.maxSectionsWaited)} (FIFO 15)`);
    parts.push(
      `hand-overs ${pc(m.handOverShare)} (${fmt(m.handOversPerSecond ?? NaN)}/s), busiest caller ${pc(m.busiestCallerShare)}`,
    );
    parts.push(r.samples.every((s) => s.exact === 1) ? 'exact' : 'INEXACT');
    const errors = r.samples.reduce((n, s) => n + (s.errors ?? 0), 0);
    if (errors) parts.push(`${errors} give-ups`);
    return parts.join(', ');
  }
  if (r.scenario === 's4') {
    const exact = r.samples.every((s) => s.exact === 1) ? 'exact' : 'INEXACT';
    return m.cpuUsPerCycle === undefined ? exact : `CPU ${m.cpuUsPerCycle.toFixed(2)} µs/cycle, ${exact}`;
  }
  if (r.scenario === 's1' && m.redisCpuUsPerCycle !== undefined)
    return `Redis CPU ${m.redisCpuUsPerCycle.toFixed(1)} µs/cycle`;
  if (r.scenario === 's5' && m.cpuUsPerRequest !== undefined)
    return `app CPU ${m.cpuUsPerRequest.toFixed(0)} µs/request`;
  return '';
}

/** The one table, as Markdown (readable in a terminal too). */
export function table(rows: Row[]): string {
  const header = [
    'Scenario',
    'Contender',
    'Retry',
    'Throughput (median)',
    'Spread (IQR)',
    'p50 ms',
    'p99 ms',
    'Details',
    '× raw',
    '× best peer',
  ];
  const lines = [header, header.map(() => '---')];
  let last = '';
  for (const r of rows) {
    const key = `${r.scenario}|${r.variant}`;
    const scen = key === last ? '' : `${SCENARIO_TITLES[r.scenario] ?? r.scenario} — ${r.variant}`;
    last = key;
    if (r.skipped) {
      lines.push([scen, r.label, r.retry, `skipped: ${r.skipped}`, '', '', '', '', '', '']);
      continue;
    }
    const vsPeer =
      r.vsBestDefaultPeer !== undefined && r.vsBestPeer !== undefined && r.bestDefaultPeer !== r.bestPeer
        ? `${ratio(r.vsBestDefaultPeer)} default / ${ratio(r.vsBestPeer)} any`
        : ratio(r.vsBestPeer);
    lines.push([
      scen,
      r.kind === 'ours' ? `**${r.label}**` : r.label,
      r.retry,
      `${fmt(r.median.throughput!)} ${r.unit}`,
      pct(r.spread),
      ms(r.median.p50),
      ms(r.median.p99),
      extra(r),
      ratio(r.vsRaw),
      vsPeer,
    ]);
  }
  return lines.map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

function find(rows: Row[], scenario: string, id: string, variant?: string): Row | undefined {
  return rows.find(
    (r) =>
      r.scenario === scenario && r.id === id && !r.skipped && (variant === undefined || r.variant.startsWith(variant)),
  );
}

/** The targets, checked against this run. */
export function targets(rows: Row[]): Target[] {
  const t: Target[] = [];
  const s1 = find(rows, 's1', 'ours-redis');
  t.push(target('s1', 'uncontended Redis ≥ 1.0× raw', s1?.vsRaw, '>=', 1.0));
  const s2 = find(rows, 's2', 'ours-redis');
  t.push(target('s2', '64 parallel callers ≥ 0.9× raw', s2?.vsRaw, '>=', 0.9));
  const s3 = find(rows, 's3', 'ours-redis');
  t.push(
    target(
      's3',
      'contended ≥ 0.75× the no-lock ceiling (one caller, no lock, same section)',
      s3?.vsCeiling,
      '>=',
      0.75,
    ),
  );
  t.push(target('s3', 'contended ≥ 1.3× raw 1 ms poller', s3?.vsRaw, '>=', 1.3));
  t.push(
    target(
      's3',
      'contended ≤ 5 Redis commands per section (INFO total_commands_processed, in-script calls included)',
      s3?.median.lockCommandsPerSection,
      '<=',
      5,
    ),
  );
  t.push(
    target(
      's3',
      'contended ≤ 5 Redis commands per section, counting round trips only (client commands seen by MONITOR)',
      s3?.median.roundTripsPerSection,
      '<=',
      5,
    ),
  );
  // Strict FIFO order makes each of 16 looping callers wait for the 15 sections of the others; the
  // wait in ms also holds the machine's stalls, which a strict FIFO lock suffers as much (see the notes).
  t.push(
    target(
      's3',
      'longest wait ≤ 1.5× strict FIFO, in sections of other callers run while it waited (FIFO: 15; the most of any run)',
      s3 ? Math.max(...s3.samples.map((s) => s.sectionsWaitedVsFifo ?? NaN)) : undefined,
      '<=',
      1.5,
    ),
  );
  t.push(
    target(
      's3',
      'counter exact in every run (1 = yes)',
      s3 ? Math.min(...s3.samples.map((s) => s.exact!)) : undefined,
      '>=',
      1,
    ),
  );
  for (const [variant, required] of [
    ['sequential', 1.5],
    ['100 concurrent', 1.2],
  ] as const) {
    const r = find(rows, 's4', 'ours-memory', variant);
    const mutex = find(rows, 's4', 'async-mutex', variant);
    t.push(
      target(
        's4',
        `in-memory ${variant} ≥ ${required}× async-mutex`,
        r && mutex ? r.median.throughput! / mutex.median.throughput! : undefined,
        '>=',
        required,
      ),
    );
    const idle = find(rows, 's4', 'ours-memory-otel-idle', variant);
    t.push(
      target(
        's4',
        `in-memory ${variant}, @opentelemetry/api installed and no SDK ≥ 0.9× without the package`,
        r && idle ? idle.median.throughput! / r.median.throughput! : undefined,
        '>=',
        0.9,
      ),
    );
  }
  for (const [store, required] of [
    ['memory', 0.8],
    ['redis', 0.9],
  ] as const) {
    const r = find(rows, 's5', `http-distinct-${store}`);
    t.push(target('s5', `HTTP @Locked distinct names (${store}) ≥ ${required}× undecorated`, r?.vsRaw, '>=', required));
  }
  // Throughput on a shared 2-core machine swings more between runs than the two differ; the app's CPU per request less so.
  const cpu = (id: string): number | undefined => find(rows, 's5', id)?.median.cpuUsPerRequest;
  const [oursCpu, murlockCpu] = [cpu('http-distinct-redis'), cpu('http-distinct-murlock')];
  t.push(
    target(
      's5',
      "HTTP @Locked distinct names (redis): the app's CPU per request ÷ @MurLock's ≤ 1",
      oursCpu !== undefined && murlockCpu !== undefined ? oursCpu / murlockCpu : undefined,
      '<=',
      1,
    ),
  );
  return t;
}

export function targetLines(ts: Target[]): string {
  return ts
    .map((x) => {
      const mark = x.met === undefined ? 'not measured' : x.met ? 'met' : 'not met';
      // Enough digits that a figure just past its bound does not print as the bound itself (5.003 > 5).
      const digits = x.met === false && x.actual!.toFixed(2) === x.required.toFixed(2) ? 3 : 2;
      const actual = x.actual === undefined || Number.isNaN(x.actual) ? '-' : x.actual.toFixed(digits);
      return `- [${mark}] ${SCENARIO_TITLES[x.scenario]?.split(' (')[0] ?? x.scenario}: ${x.text}: ${actual} (needs ${x.op} ${x.required})`;
    })
    .join('\n');
}

export function legend(rows: Row[]): string {
  const seen = new Map<string, string>();
  for (const r of rows) if (r.retry !== '-' || r.kind !== 'ours') seen.set(describe(r), r.waits);
  const lines = [...seen].filter(([, w]) => w !== '-').map(([k, w]) => `- ${k}: ${w}`);
  const notes = rows.flatMap((r) =>
    r.notes.map((n) => `- ${SCENARIO_TITLES[r.scenario] ?? r.scenario}, ${describe(r)}: ${n}`),
  );
  return ['How each contender waits:', ...lines, ...(notes.length ? ['', 'Notes:', ...notes] : [])].join('\n');
}
