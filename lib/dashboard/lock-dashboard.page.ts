import { createHash } from 'node:crypto';

/*
 * The lock page: one HTML document, no build step, no framework. It reads
 * `<its own path>/data` every `refreshMs` and renders with textContent only
 * (lock names are application data, never markup).
 */

const STYLE = `
:root { font: 14px/1.4 system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
body { margin: 0 auto; max-width: 1100px; padding: 16px 20px 40px; }
h1 { font-size: 20px; margin: 0 0 2px; } h2 { font-size: 15px; margin: 24px 0 8px; }
.meta { color: #5b6475; font-size: 12px; }
.error { background: #fde8e8; color: #8a1c1c; padding: 8px 12px; border-radius: 6px; margin: 12px 0; }
table { width: 100%; border-collapse: collapse; background: #fff; border-radius: 6px; overflow: hidden; box-shadow: 0 1px 2px #0001; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid #eceef2; vertical-align: middle; }
th { font-size: 12px; color: #5b6475; font-weight: 600; background: #fafbfc; }
td.num { font-variant-numeric: tabular-nums; }
.name { font-family: ui-monospace, monospace; word-break: break-all; }
.bar { width: 140px; height: 8px; background: #eceef2; border-radius: 4px; overflow: hidden; display: inline-block; vertical-align: middle; margin-right: 6px; }
.bar > span { display: block; height: 100%; background: #2f9e5b; }
.bar > span.low { background: #d9822b; } .bar > span.crit { background: #d14343; }
.tag { font-size: 11px; padding: 1px 6px; border-radius: 8px; background: #e7edf9; color: #2b4a8b; }
.ev-lost, .ev-store-error, .ev-timeout { color: #a02525; } .ev-acquired { color: #22663f; }
.empty { color: #8a93a3; text-align: center; padding: 14px; }
`;

const SCRIPT = `
(() => {
  const base = location.pathname.replace(/\\/+$/, '');
  const $ = (id) => document.getElementById(id);
  const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; };
  const row = (cells) => { const tr = document.createElement('tr'); for (const c of cells) tr.append(c instanceof Node ? c : el('td', c)); return tr; };
  const td = (child, cls) => { const t = el('td', undefined, cls); t.append(child); return t; };
  const ms = (n) => n < 1000 ? n + ' ms' : n < 120000 ? (n / 1000).toFixed(1) + ' s' : Math.round(n / 60000) + ' min';
  const ago = (iso) => iso ? ms(Math.max(0, Date.now() - Date.parse(iso))) + ' ago' : '—';
  const fill = (tbody, rows, cols, empty) => { tbody.replaceChildren(...(rows.length ? rows : [row([Object.assign(el('td', empty, 'empty'), { colSpan: cols })])])); };
  const longest = new Map();
  // A custom store may not record grant times: then show how long this page has seen the lock.
  const firstSeen = new Map();
  let timer;

  function leaseBar(lock) {
    const id = lock.name + '#' + lock.fencingToken;
    const max = Math.max(longest.get(id) || 0, lock.leaseRemainingMs, 1);
    longest.set(id, max);
    const share = lock.leaseRemainingMs / max;
    const bar = el('span', undefined, 'bar');
    const inner = el('span', undefined, share < 0.2 ? 'crit' : share < 0.5 ? 'low' : '');
    inner.style.width = Math.round(share * 100) + '%';
    bar.append(inner);
    const cell = el('td');
    cell.append(bar, el('span', ms(lock.leaseRemainingMs)));
    return cell;
  }

  function render(data) {
    $('store').textContent = data.store;
    $('updated').textContent = new Date(data.generatedAt).toLocaleTimeString();
    $('error').hidden = !data.storeError;
    $('error').textContent = data.storeError ? 'Reading the store failed: ' + data.storeError : '';
    $('held-count').textContent = data.locks.length + (data.more ? '+' : '');
    // Forget locks no longer held, so a page left open for days stays small.
    const current = new Set(data.locks.map((l) => l.name + '#' + l.fencingToken));
    for (const seen of [longest, firstSeen]) for (const id of seen.keys()) if (!current.has(id)) seen.delete(id);
    fill($('locks'), data.locks.map((l) => {
      const holder = el('td', l.instanceId || (l.mine ? 'this process' : 'another process'));
      if (l.mine && l.instanceId) holder.append(' ', el('span', 'this process', 'tag'));
      const id = l.name + '#' + l.fencingToken;
      if (!firstSeen.has(id)) firstSeen.set(id, new Date().toISOString());
      const since = l.heldSince ? el('td', ago(l.heldSince)) : el('td', '≥ ' + ago(firstSeen.get(id)));
      if (!l.heldSince) since.title = 'The store does not record grant times: held at least since this page first saw it';
      return row([td(el('span', l.name, 'name')), el('td', l.label || '—'), holder, el('td', l.fencingToken, 'num'), leaseBar(l), since, el('td', l.waiters, 'num')]);
    }), 7, 'No lock is held.');
    fill($('counts'), data.counts.map((c) => row([td(el('span', c.name, 'name')), el('td', c.acquired, 'num'), el('td', c.released, 'num'), el('td', c.lost, 'num'), el('td', c.timeouts, 'num'), el('td', c.storeErrors, 'num')])), 6, 'No events yet.');
    fill($('recent'), data.recent.map((e) => row([
      el('td', new Date(e.at).toLocaleTimeString()),
      el('td', e.type, 'ev-' + e.type),
      td(el('span', e.name, 'name')),
      el('td', [e.fencingToken !== undefined ? 'token ' + e.fencingToken : '', e.waitMs !== undefined ? 'waited ' + ms(e.waitMs) : '', e.heldMs !== undefined ? 'held ' + ms(e.heldMs) : '', e.detail || ''].filter(Boolean).join(' · ')),
    ])), 4, 'No events yet.');
  }

  async function refresh() {
    let wait = 2000;
    try {
      const res = await fetch(base + '/data', { headers: { accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' });
      if (!res.ok) throw new Error('the server answered ' + res.status + (res.status === 403 || res.status === 401 ? ' (not allowed)' : ''));
      const data = await res.json();
      wait = data.refreshMs;
      render(data);
      $('fetch-error').hidden = true;
    } catch (err) {
      $('fetch-error').hidden = false;
      $('fetch-error').textContent = 'Could not refresh: ' + err.message;
    }
    timer = setTimeout(refresh, wait);
  }
  refresh();
})();
`;

/** The page's HTML. @internal */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Locks</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Locks</h1>
<div class="meta">store <b id="store">…</b> · updated <span id="updated">…</span> · refreshes on its own</div>
<div id="fetch-error" class="error" hidden></div>
<div id="error" class="error" hidden></div>
<h2>Held now (<span id="held-count">0</span>)</h2>
<table><thead><tr><th>Name</th><th>Label</th><th>Holder</th><th>Fencing token</th><th>Lease left</th><th>Held since</th><th>Waiters</th></tr></thead><tbody id="locks"></tbody></table>
<h2>Events per name</h2>
<table><thead><tr><th>Name</th><th>Acquired</th><th>Released</th><th>Lost</th><th>Timeouts</th><th>Store errors</th></tr></thead><tbody id="counts"></tbody></table>
<h2>Recent events</h2>
<table><thead><tr><th>Time</th><th>Event</th><th>Name</th><th>Details</th></tr></thead><tbody id="recent"></tbody></table>
<script>${SCRIPT}</script>
</body>
</html>
`;

const sha = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The page's Content-Security-Policy: its own inline style and script only, fetches to its own origin. @internal */
export const DASHBOARD_CSP = `default-src 'none'; style-src ${sha(STYLE)}; script-src ${sha(SCRIPT)}; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
