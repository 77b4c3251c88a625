'use strict';
(function () {
const M = JSON.parse(document.getElementById('timeline-model').textContent);
const E = M.epochs.n.length;
const P = M.paths;
P.events = Int32Array.from(P.events);
const N = P.name.length;
const KINDS = M.kinds;
const KIND_LABEL = { pass: 'preservation pass', commit: 'commit (no kind)', checkpoint: 'checkpoint',
  restorationBegan: 'restoration began', restorationCompleted: 'restoration completed', discard: 'discard',
  rewind: 'rewind', term: 'replication term began' };
const css = getComputedStyle(document.documentElement);
const KIND_COLOR = KINDS.map(k => css.getPropertyValue('--' + k).trim() || '#888');
const MARKER = {
  crashLoopFallback: { color: '#d62728', label: 'crash-loop fallback', shape: 'tri' },
  recovered: { color: '#ff7f0e', label: 'recovered after a crash', shape: 'tri' },
  unfinished: { color: '#8c1c13', label: 'restoration never completed', shape: 'x' },
  rewound: { color: '#d6616b', label: 'rewound store', shape: 'tri' },
  termBegan: { color: '#0f8b8d', label: 'replication term began', shape: 'tri' },
  unsyncedTail: { color: '#7b4fc9', label: 'unsynced tail (power cut)', shape: 'square' },
  uncommittedTail: { color: '#8b94a3', label: 'uncommitted tail', shape: 'square' },
  damage: { color: '#111111', label: 'damage', shape: 'square' },
  sceneDiscarded: { color: '#6b6ecf', label: 'window closed (scene discarded)', shape: 'x' }
};
const COMPACTION_COLOR = '#2f7d32';
const CHANGE = '#3b6fb6', REMOVE = '#d62728', AGG = '#8497b8';
const GUTTER = 250, RIGHT = 14, ROW_H = 22;

// ---- helpers -------------------------------------------------------------------------
const $ = id => document.getElementById(id);
const fmt = n => Number(n).toLocaleString('en-US');
function bytes(n) {
  if (n < 1024) return n + ' B';
  const units = ['KiB', 'MiB', 'GiB']; let u = -1;
  do { n /= 1024; u++; } while (n >= 1024 && u < units.length - 1);
  return (n >= 100 ? n.toFixed(0) : n.toFixed(1)) + ' ' + units[u];
}
function esc(s) { return String(s).replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]); }
function iso(ms) {
  const d = new Date(ms); const p = (v, w) => String(v).padStart(w || 2, '0');
  return d.getUTCFullYear() + '-' + p(d.getUTCMonth() + 1) + '-' + p(d.getUTCDate()) + 'T' + p(d.getUTCHours()) + ':' +
    p(d.getUTCMinutes()) + ':' + p(d.getUTCSeconds()) + '.' + p(d.getUTCMilliseconds(), 3) + 'Z';
}
function duration(ms) {
  if (ms < 1000) return Math.max(0, Math.round(ms)) + ' ms';
  if (ms < 120000) return (ms / 1000).toFixed(1) + ' s';
  return (ms / 60000).toFixed(1) + ' min';
}
// Text read from the store (metadata) as one visible line: control characters (the line feed and the
// tab too), line separators and bidirectional overrides written as \u{...} escapes, as the command line
// writes them, so that no value can break a line, hide text or reorder what follows it.
function printable(s) {
  let out = '';
  for (const ch of String(s)) {
    const c = ch.codePointAt(0);
    const hidden = c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x200e || c === 0x200f || (c >= 0x2028 && c <= 0x202e) ||
      (c >= 0x2066 && c <= 0x2069);
    out += hidden ? '\\u{' + c.toString(16) + '}' : ch;
  }
  return out;
}
function shq(s) { return /^[A-Za-z0-9_/.:@%+=,-]+$/.test(s) ? s : "'" + String(s).replace(/'/g, "'\\''") + "'"; }
const kindOf = row => KINDS[M.epochs.k[row]];
const meta = row => M.epochs.metadata[M.epochs.m[row]] || {};

// ---- the path tree -------------------------------------------------------------------
const parentOf = new Int32Array(N).fill(-1);
{ const stack = []; for (let i = 0; i < N; i++) { while (stack.length && P.end[stack[stack.length - 1]] <= i) stack.pop();
    parentOf[i] = stack.length ? stack[stack.length - 1] : -1; stack.push(i); } }
const fullPathCache = new Map();
function fullPath(i) {
  let s = fullPathCache.get(i); if (s !== undefined) return s;
  const own = P.name[i].replace(/[\\/]/g, m => '\\' + m);
  s = parentOf[i] < 0 ? own : fullPath(parentOf[i]) + '/' + own;
  fullPathCache.set(i, s); return s;
}
const hasChildren = i => P.end[i] > i + 1;
const expanded = new Uint8Array(N);
const subtreeCache = new Map();
// Rows (times 2, plus 1 for a removal) at which anything in the subtree of i changed, sorted.
function subtreeEvents(i) {
  let out = subtreeCache.get(i); if (out) return out;
  const flags = new Uint8Array(E);
  for (let e = P.start[i]; e < P.start[P.end[i]]; e++) { const v = P.events[e]; flags[v >> 1] |= (v & 1) ? 2 : 1; }
  const list = []; for (let r = 0; r < E; r++) if (flags[r]) list.push(r * 2 + (flags[r] & 1 ? 0 : 1));
  out = Int32Array.from(list); subtreeCache.set(i, out); return out;
}
function ownEvents(i) { return P.events.subarray(P.start[i], P.start[i + 1]); }

// ---- the version archive -------------------------------------------------------------
const chunkCache = new Map();
function lz4(src, size) {
  const dst = new Uint8Array(size); let s = 0, d = 0;
  while (s < src.length) {
    const token = src[s++]; let lit = token >> 4;
    if (lit === 15) { let b; do { b = src[s++]; lit += b; } while (b === 255); }
    dst.set(src.subarray(s, s + lit), d); s += lit; d += lit;
    if (s >= src.length) break;
    const offset = src[s] | (src[s + 1] << 8); s += 2;
    let len = token & 15; if (len === 15) { let b; do { b = src[s++]; len += b; } while (b === 255); }
    len += 4; let from = d - offset;
    for (let k = 0; k < len; k++) dst[d++] = dst[from++];
  }
  return dst;
}
function chunk(c) {
  let records = chunkCache.get(c); if (records) return records;
  const el = $('chunk-' + c);
  const bin = atob(el.textContent.trim()); const src = new Uint8Array(bin.length);
  for (let k = 0; k < bin.length; k++) src[k] = bin.charCodeAt(k);
  records = new TextDecoder().decode(lz4(src, Number(el.dataset.raw))).split('\u001e');
  chunkCache.set(c, records); return records;
}
function version(v) {
  const starts = M.archive.chunkStarts; let lo = 0, hi = starts.length - 2;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= v) lo = mid; else hi = mid - 1; }
  const rec = chunk(lo)[v - starts[lo]];
  if (rec === '-') return { omitted: true };
  if (rec[0] === 'r') { const tab = rec.indexOf('\t'); return { keyed: true, type: rec.slice(1, tab), json: rec.slice(tab + 1) }; }
  if (rec[0] === 'c') { const tab = rec.indexOf('\t'); return { cut: Number(rec.slice(1, tab)), line: rec.slice(tab + 1) }; }
  return { line: rec.slice(1) };
}
const lineOf = x => x.keyed ? x.type + ' ' + x.json : x.line;
// The members of a compact JSON object, each value's text as it is.
function members(json) {
  const out = new Map(); let i = 1, depth = 0, inStr = false, keyStart = -1, key = null, valStart = -1;
  for (; i < json.length - 1; i++) {
    const ch = json[i];
    if (inStr) { if (ch === '\\') i++; else if (ch === '"') inStr = false; continue; }
    if (ch === '"') { inStr = true; if (depth === 0 && key === null && keyStart < 0) keyStart = i; continue; }
    if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
    else if (depth === 0 && ch === ':' && key === null) { key = JSON.parse(json.slice(keyStart, i)); valStart = i + 1; }
    else if (depth === 0 && ch === ',') { out.set(key, json.slice(valStart, i)); key = null; keyStart = -1; }
  }
  if (key !== null) out.set(key, json.slice(valStart, json.length - 1));
  return out;
}
// The versions of node i: for each event, its row, whether it removed, and its version index.
function versionsOf(i) {
  const out = []; let v = P.firstVersion[i];
  for (let e = P.start[i]; e < P.start[i + 1]; e++) {
    const x = P.events[e]; const removed = (x & 1) === 1;
    out.push({ row: x >> 1, removed, v: removed ? -1 : v++ });
  }
  return out;
}
const unavailable = (row, path) => '(not embedded: newer states filled the page\u2019s budget; run  statejournal show ' +
  shq(M.store) + ' --epoch ' + M.epochs.n[row] + ' --path ' + shq(path) + ')';
function showText(path, x, row) {
  if (x.omitted) return unavailable(row, path);
  return path + '  ' + lineOf(x) + (x.cut ? '  \u2026 (cut: ' + fmt(x.cut) + ' bytes)' : '');
}
function diffHTML(path, before, after, row) {
  if (after && after.omitted || before && before.omitted) return esc(unavailable(row, path));
  if (!before && !after) return '<span class="muted">' + esc(path) + ': (no state before or after)</span>';
  if (!before && after) return '<span class="diff-add">+ ' + esc(path + '  ' + lineOf(after)) + '</span>';
  if (before && !after) return '<span class="diff-del">- ' + esc(path + '  ' + lineOf(before)) + '</span>';
  if (lineOf(before) === lineOf(after)) return '<span class="muted">(the same state was written again)</span>';
  let out = '<span class="diff-chg">~ ' + esc(path) + '</span>';
  if (before.keyed && after.keyed && !before.cut && !after.cut) {
    const a = members(before.json), b = members(after.json);
    const keys = Array.from(new Set([...a.keys(), ...b.keys()])).filter(k => a.get(k) !== b.get(k)).sort();
    if (keys.length) {
      for (const k of keys) out += '\n    ' + esc(k) + ': ' + '<span class="diff-del">' + esc(a.has(k) ? a.get(k) : '(absent)') +
        '</span> -> <span class="diff-add">' + esc(b.has(k) ? b.get(k) : '(absent)') + '</span>';
      return out;
    }
  }
  return out + '\n    was  <span class="diff-del">' + esc(lineOf(before)) + '</span>\n    now  <span class="diff-add">' + esc(lineOf(after)) + '</span>';
}

// ---- launches ------------------------------------------------------------------------
const launches = M.launches;
const bands = [];
{ const first = launches.length ? launches[0].began : E;
  if (first > 0) bands.push({ from: 0, to: first - 1, label: 'first run', launch: -1 });
  launches.forEach((l, k) => bands.push({ from: l.began, to: k + 1 < launches.length ? launches[k + 1].began - 1 : E - 1,
    label: 'launch ' + (k + 1) + sceneTag(l) + launchTag(l), launch: k })); }
// The window (scene) a restoration restored; nothing for the default scene.
function sceneTag(l) { return l.scene != null ? ' · window ' + l.scene : ''; }
function launchTag(l) {
  const r = l.report && l.report.reason || '';
  if (r.startsWith('crashLoopFallback')) return ' · crash-loop fallback';
  if (r === 'recoveryAfterCrash') return ' · restart after crash';
  if (r.startsWith('requestedEpoch')) return ' · time travel';
  if (l.completed == null) return ' · never completed';
  return '';
}

// ---- outages --------------------------------------------------------------------------
// The catch-up epoch after the store was unavailable (a failed write or sync) carries the time the
// outage began: nothing was saved from then on, so its band spans the epochs committed since that
// time, if any, up to the catch-up epoch. An outage commits nothing, so the band is often the
// catch-up epoch's column alone: it is drawn at least OUTAGE_MIN_PX wide, around the boundary between
// the epochs before the outage and the catch-up epoch. Hovering over it names the reason.
const OUTAGE_MIN_PX = 6;
const outages = [];
for (let r = 0; r < E; r++) {
  const md = meta(r);
  // A term marker carries a copy of the metadata of the epoch before it, not an outage of its own.
  if (!md.outageStarted || kindOf(r) === 'term') continue;
  const started = Date.parse(md.outageStarted);
  if (!Number.isFinite(started)) continue;
  let from = r;
  while (from > 0 && M.epochs.t[from - 1] >= started) from--;
  outages.push({ from, to: r, started, reason: printable(md.outageReason || 'a failed write or sync') });
}
function outageAt(row) { return outages.find(o => o.to === row); }
function outageText(o) {
  return 'Store unavailable from ' + iso(o.started) + ' (' + o.reason + ') until the catch-up pass at epoch ' +
    fmt(M.epochs.n[o.to]) + ', ' + duration(M.epochs.t[o.to] - o.started) + ' later';
}

// ---- replication terms -----------------------------------------------------------------
// A promoted store's history holds a marker epoch where each replication term began: its band runs
// from the marker to the epoch before the next one, and the epochs before the first marker are the
// previous term's, as the replica held them. Hovering over the strip names the term and where the
// previous primary's history ends.
const TERM_STRIP = [34, 40];
const terms = [];
for (let r = 0; r < E; r++) {
  if (kindOf(r) !== 'term') continue;
  const md = meta(r), marker = M.markers.find(m => m.row === r && m.type === 'termBegan');
  if (!terms.length && r > 0 && md['statejournal.previousTerm'] && md['statejournal.previousTerm'] !== '0')
    terms.push({ from: 0, to: r - 1, term: printable(md['statejournal.previousTerm']), text: 'Replication term ' +
      printable(md['statejournal.previousTerm']) + ', as the replica held it when term ' + printable(md['statejournal.term'] || '?') + ' began' });
  if (terms.length) terms[terms.length - 1].to = Math.min(terms[terms.length - 1].to, r - 1);
  terms.push({ from: r, to: E - 1, term: printable(md['statejournal.term'] || '?'), text: marker ? marker.text : 'Replication term began' });
}
function termUnder(canvas, x, y) {
  if (y < TERM_STRIP[0] - 2 || y > TERM_STRIP[1] + 2) return null; const row = nearestRow(canvas, x);
  return terms.find(t => row >= t.from && row <= t.to) || null;
}
function drawTerms(g, canvas, bottom) {
  terms.forEach((t, k) => {
    const x0 = Math.max(GUTTER, xOf(canvas, t.from - 0.5)), x1 = Math.min(canvas.clientWidth - RIGHT, xOf(canvas, t.to + 0.5));
    if (x1 <= x0) return;
    g.fillStyle = k % 2 ? 'rgba(15,139,141,0.55)' : 'rgba(15,139,141,0.25)'; g.fillRect(x0, TERM_STRIP[0], x1 - x0, TERM_STRIP[1] - TERM_STRIP[0]);
    if (t.from > 0) { g.strokeStyle = 'rgba(15,139,141,0.9)'; g.lineWidth = 1.5; g.beginPath(); g.moveTo(Math.round(x0) + .5, 4); g.lineTo(Math.round(x0) + .5, bottom); g.stroke(); g.lineWidth = 1; }
    if (x1 - x0 > 50) { g.fillStyle = '#0b5f60'; g.textAlign = 'left'; g.save(); g.beginPath(); g.rect(x0, TERM_STRIP[1], x1 - x0 - 2, 12); g.clip();
      g.fillText('term ' + t.term, x0 + 4, TERM_STRIP[1] + 6); g.restore(); }
  });
}

// ---- the view ------------------------------------------------------------------------
const view = { lo: 0, hi: Math.max(E, 1) };
let selection = null; // { row } or { node, row }
function plotWidth(canvas) { return canvas.clientWidth - GUTTER - RIGHT; }
const xOf = (canvas, row) => GUTTER + (row + 0.5 - view.lo) / (view.hi - view.lo) * plotWidth(canvas);
function setup(canvas) {
  const dpr = window.devicePixelRatio || 1; const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) { canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr); }
  const g = canvas.getContext('2d'); g.setTransform(dpr, 0, 0, dpr, 0, 0); g.clearRect(0, 0, w, h);
  g.font = '11px system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif'; g.textBaseline = 'middle';
  return { g, w, h };
}
function niceStep(span, px) { const raw = span / Math.max(1, px / 110); const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
  for (const m of [1, 2, 5, 10]) if (p * m >= raw) return Math.max(1, p * m); return p * 10; }
function drawBands(g, canvas, yTop, bottom, labels) {
  bands.forEach((b, k) => {
    const x0 = Math.max(GUTTER, xOf(canvas, b.from - 0.5)), x1 = Math.min(canvas.clientWidth - RIGHT, xOf(canvas, b.to + 0.5));
    if (x1 <= x0) return;
    g.fillStyle = k % 2 ? 'rgba(47,111,214,0.07)' : 'rgba(120,130,150,0.035)'; g.fillRect(x0, yTop, x1 - x0, bottom - yTop);
    g.strokeStyle = 'rgba(47,111,214,0.35)'; g.setLineDash([3, 3]); g.beginPath(); g.moveTo(Math.round(x0) + .5, yTop); g.lineTo(Math.round(x0) + .5, bottom); g.stroke(); g.setLineDash([]);
    if (labels && x1 - x0 > 60) { g.fillStyle = '#4a5568'; g.textAlign = 'left'; g.save(); g.beginPath(); g.rect(x0, yTop, x1 - x0 - 4, 16); g.clip();
      g.fillText(b.label, x0 + 5, yTop + 8); g.restore(); }
  });
}
// The pixels an outage's band covers on a canvas, clipped to the plot; x1 <= x0 when out of view.
function outageSpan(canvas, o) {
  let x0 = xOf(canvas, o.from - 0.5), x1 = xOf(canvas, o.to + 0.5);
  if (x1 - x0 < OUTAGE_MIN_PX) { const mid = (x0 + x1) / 2; x0 = mid - OUTAGE_MIN_PX / 2; x1 = mid + OUTAGE_MIN_PX / 2; }
  return [Math.max(GUTTER, x0), Math.min(canvas.clientWidth - RIGHT, x1)];
}
function outageUnder(canvas, x) { return outages.find(o => { const [x0, x1] = outageSpan(canvas, o); return x1 > x0 && x >= x0 - 1 && x <= x1 + 1; }); }
function drawOutages(g, canvas, yTop, bottom) {
  outages.forEach(o => {
    const [x0, x1] = outageSpan(canvas, o);
    if (x1 <= x0) return;
    g.fillStyle = 'rgba(214,47,47,0.16)'; g.fillRect(x0, yTop, x1 - x0, bottom - yTop);
    g.fillStyle = 'rgba(214,47,47,0.8)'; g.fillRect(x0, yTop, Math.max(2, x1 - x0), 3);
  });
}
function drawSelection(g, canvas, yTop, bottom) {
  if (!selection) return; const x = xOf(canvas, selection.row);
  if (x < GUTTER || x > canvas.clientWidth - RIGHT) return;
  g.strokeStyle = 'rgba(47,111,214,0.9)'; g.lineWidth = 1.5; g.beginPath(); g.moveTo(x, yTop); g.lineTo(x, bottom); g.stroke(); g.lineWidth = 1;
}
function glyph(g, shape, x, y, color, r) {
  g.fillStyle = color; g.strokeStyle = color; g.beginPath();
  if (shape === 'tri') { g.moveTo(x, y + r); g.lineTo(x - r, y - r); g.lineTo(x + r, y - r); g.closePath(); g.fill(); }
  else if (shape === 'x') { g.lineWidth = 2; g.moveTo(x - r, y - r); g.lineTo(x + r, y + r); g.moveTo(x + r, y - r); g.lineTo(x - r, y + r); g.stroke(); g.lineWidth = 1; }
  else if (shape === 'diamond') { g.moveTo(x, y - r); g.lineTo(x + r, y); g.lineTo(x, y + r); g.lineTo(x - r, y); g.closePath(); g.fill(); }
  else if (shape === 'circle') { g.arc(x, y, r, 0, Math.PI * 2); g.fill(); }
  else { g.fillRect(x - r, y - r, 2 * r, 2 * r); }
}

function drawEpochs() {
  const canvas = $('epochs-canvas'); const { g, w, h } = setup(canvas);
  const markerY = 30, barTop = 42, barBottom = h - 36, pw = plotWidth(canvas);
  drawBands(g, canvas, 4, barBottom, true);
  drawOutages(g, canvas, 4, barBottom);
  drawTerms(g, canvas, barBottom);
  let maxB = 10; for (let r = 0; r < E; r++) if (M.epochs.b[r] > maxB) maxB = M.epochs.b[r];
  const lmax = Math.log10(maxB), lmin = 1;
  const yOf = b => barBottom - (Math.log10(Math.max(b, 10)) - lmin) / Math.max(0.001, lmax - lmin) * (barBottom - barTop) - 2;
  g.textAlign = 'right'; g.fillStyle = '#8b94a3'; g.strokeStyle = '#eef0f4';
  for (let p = 1; p <= Math.ceil(lmax); p++) { const y = yOf(Math.pow(10, p)); if (y < barTop - 1) break;
    g.beginPath(); g.moveTo(GUTTER, Math.round(y) + .5); g.lineTo(w - RIGHT, Math.round(y) + .5); g.stroke();
    g.fillText(bytes(Math.pow(10, p)).replace('.0 ', ' '), GUTTER - 8, y); }
  g.fillStyle = '#5d6778'; g.textAlign = 'left'; g.fillText('markers', 12, markerY); g.fillText('bytes written', 12, (barTop + barBottom) / 2);
  // Bars: one per pixel column when epochs outnumber pixels, the biggest and rarest kind shown.
  const priority = [1, 0, 3, 6, 6, 5, 7, 7];
  const lo = Math.max(0, Math.floor(view.lo)), hi = Math.min(E - 1, Math.ceil(view.hi));
  const perPx = (view.hi - view.lo) / pw;
  if (perPx <= 0.5) {
    const bw = Math.max(1, Math.min(28, 0.75 / perPx));
    for (let r = lo; r <= hi; r++) { const x = xOf(canvas, r); const y = yOf(M.epochs.b[r]);
      g.fillStyle = KIND_COLOR[M.epochs.k[r]]; g.fillRect(x - bw / 2, y, bw, barBottom - y); }
  } else {
    const cols = Math.ceil(pw) + 1; const best = new Float64Array(cols), kind = new Int8Array(cols).fill(-1);
    for (let r = lo; r <= hi; r++) { const c = Math.floor(xOf(canvas, r) - GUTTER); if (c < 0 || c >= cols) continue;
      const k = M.epochs.k[r]; if (M.epochs.b[r] > best[c]) best[c] = M.epochs.b[r];
      if (kind[c] < 0 || priority[k] > priority[kind[c]]) kind[c] = k; }
    for (let c = 0; c < cols; c++) if (kind[c] >= 0) { const y = yOf(best[c]); g.fillStyle = KIND_COLOR[kind[c]]; g.fillRect(GUTTER + c, y, 1, barBottom - y); }
  }
  for (const m of M.markers) { const x = xOf(canvas, m.row); if (x < GUTTER - 2 || x > w - RIGHT + 2) continue;
    const s = MARKER[m.type] || MARKER.damage; glyph(g, s.shape, x, markerY, s.color, 5); }
  for (const c of M.compactions) if (c.row != null) { const x = xOf(canvas, c.row); if (x >= GUTTER - 2 && x <= w - RIGHT + 2) glyph(g, 'diamond', x, markerY, COMPACTION_COLOR, 5); }
  // The axis: epoch numbers, and the time of the first tick.
  g.strokeStyle = '#c9ced8'; g.beginPath(); g.moveTo(GUTTER, barBottom + .5); g.lineTo(w - RIGHT, barBottom + .5); g.stroke();
  const step = niceStep(view.hi - view.lo, pw); g.fillStyle = '#5d6778'; g.textAlign = 'center';
  for (let r = Math.ceil(view.lo / step) * step; r < view.hi; r += step) { if (r >= E) break; const x = xOf(canvas, r);
    g.beginPath(); g.moveTo(x, barBottom); g.lineTo(x, barBottom + 4); g.stroke();
    g.fillText(fmt(M.epochs.n[r]), x, barBottom + 12); g.fillStyle = '#8b94a3';
    g.fillText(iso(M.epochs.t[r]).slice(11, 19), x, barBottom + 25); g.fillStyle = '#5d6778'; }
  g.textAlign = 'left'; g.fillText('epoch', 12, barBottom + 12); g.fillStyle = '#8b94a3'; g.fillText('time (UTC)', 12, barBottom + 25);
  drawSelection(g, canvas, 4, barBottom);
}

let cumulative = null;
function drawSize() {
  const canvas = $('size-canvas'); const { g, w, h } = setup(canvas);
  const yTop = 14, bottom = h - 14;
  if (!cumulative) { cumulative = new Float64Array(E); let s = 0; for (let r = 0; r < E; r++) { s += M.epochs.b[r]; cumulative[r] = s; } }
  const maxS = Math.max(E ? cumulative[E - 1] : 1, M.files.totalBytes, 1);
  const yOf = s => bottom - s / maxS * (bottom - yTop);
  drawBands(g, canvas, yTop - 10, bottom, false);
  drawOutages(g, canvas, yTop - 10, bottom);
  g.fillStyle = '#8b94a3'; g.textAlign = 'right';
  for (const f of [0, 0.5, 1]) { const y = yOf(maxS * f); g.strokeStyle = '#eef0f4'; g.beginPath(); g.moveTo(GUTTER, Math.round(y) + .5); g.lineTo(w - RIGHT, Math.round(y) + .5); g.stroke(); g.fillText(bytes(Math.round(maxS * f)), GUTTER - 8, y); }
  g.textAlign = 'left'; g.fillStyle = '#5d6778'; g.fillText('bytes', 12, yTop + 4);
  const lo = Math.max(0, Math.floor(view.lo)), hi = Math.min(E - 1, Math.ceil(view.hi));
  if (E) { g.beginPath(); g.moveTo(xOf(canvas, lo), bottom);
    const stride = Math.max(1, Math.floor((hi - lo) / (plotWidth(canvas) * 2)));
    for (let r = lo; r <= hi; r += stride) g.lineTo(xOf(canvas, r), yOf(cumulative[r]));
    g.lineTo(xOf(canvas, hi), yOf(cumulative[hi])); g.lineTo(xOf(canvas, hi), bottom); g.closePath();
    g.fillStyle = 'rgba(76,120,168,0.16)'; g.fill(); g.strokeStyle = '#4c78a8'; g.lineWidth = 1.5; g.stroke(); g.lineWidth = 1; }
  const yDisk = yOf(M.files.totalBytes); g.strokeStyle = '#54a24b'; g.setLineDash([5, 4]); g.beginPath(); g.moveTo(GUTTER, yDisk); g.lineTo(w - RIGHT, yDisk); g.stroke(); g.setLineDash([]);
  g.fillStyle = '#3d7a36'; g.textAlign = 'right'; g.fillText('on disk now: ' + bytes(M.files.totalBytes), w - RIGHT - 4, yDisk - 8);
  for (const c of M.compactions) if (c.row != null) { const x = xOf(canvas, c.row); if (x >= GUTTER - 2 && x <= w - RIGHT + 2) glyph(g, 'diamond', x, yOf(cumulative[c.row]), COMPACTION_COLOR, 6); }
  drawSelection(g, canvas, yTop - 10, bottom);
}

// ---- lanes, virtualised: only the rows in view have DOM nodes and pixels -------------
let rows = [];
const lanes = $('lanes'), labels = $('lanes-labels'), spacer = $('lanes-spacer');
let filterText = '';
function rebuildRows() {
  rows = [];
  if (filterText) {
    const keep = new Uint8Array(N); const needle = filterText.toLowerCase();
    for (let i = 0; i < N; i++) if (fullPath(i).toLowerCase().includes(needle)) { for (let a = i; a >= 0 && !keep[a]; a = parentOf[a]) keep[a] = 1; }
    for (let i = 0; i < N; i++) if (keep[i]) rows.push(i);
  } else {
    for (let i = 0; i < N;) { rows.push(i); i = (expanded[i] || !hasChildren(i)) ? i + 1 : P.end[i]; }
  }
  const viewH = Math.max(120, Math.min(460, rows.length * ROW_H + 10));
  for (const el of [lanes, $('lanes-view'), $('lanes-canvas'), labels]) el.style.height = viewH + 'px';
  spacer.style.height = Math.max(0, rows.length * ROW_H + 8 - viewH) + 'px';
  drawLanes();
}
function expandInitially() {
  // Roots open (their children are few enough to list), then deeper levels while about 40 rows show.
  const kidsOf = i => { let kids = 0; for (let c = i + 1; c < P.end[i]; c = P.end[c]) kids++; return kids; };
  let visible = 0; for (let i = 0; i < N; i = P.end[i]) visible++;
  for (let i = 0; i < N; i = P.end[i]) if (hasChildren(i) && visible + kidsOf(i) <= 400) { expanded[i] = 1; visible += kidsOf(i); }
  for (let depth = 1; depth < 64; depth++) {
    let grew = false;
    for (let i = 0; i < N; i++) if (P.depth[i] === depth && hasChildren(i) && !expanded[i] && expanded[parentOf[i]]) {
      const kids = kidsOf(i); if (visible + kids > 40) continue; expanded[i] = 1; visible += kids; grew = true; }
    if (!grew) break;
  }
}
function drawLanes() {
  const canvas = $('lanes-canvas'); const { g, w, h } = setup(canvas);
  const first = Math.max(0, Math.floor(lanes.scrollTop / ROW_H)), count = Math.ceil(h / ROW_H) + 1;
  const offset = first * ROW_H - lanes.scrollTop + 4;
  drawBands(g, canvas, 0, h, false);
  drawOutages(g, canvas, 0, h);
  let html = '';
  for (let k = 0; k < count && first + k < rows.length; k++) {
    const i = rows[first + k], y = offset + k * ROW_H, mid = y + ROW_H / 2;
    const aggregate = hasChildren(i) && !expanded[i] && !filterText;
    const sel = selection && selection.node === i;
    if ((first + k) % 2) { g.fillStyle = 'rgba(0,0,0,0.018)'; g.fillRect(0, y, w, ROW_H); }
    if (sel) { g.fillStyle = 'rgba(47,111,214,0.08)'; g.fillRect(0, y, w, ROW_H); }
    g.strokeStyle = '#edf0f4'; g.beginPath(); g.moveTo(GUTTER, mid + .5); g.lineTo(w - RIGHT, mid + .5); g.stroke();
    const evs = aggregate ? subtreeEvents(i) : ownEvents(i);
    let lastX = -10;
    for (let e = 0; e < evs.length; e++) {
      const r = evs[e] >> 1; if (r < view.lo - 1) continue; if (r > view.hi + 1) break;
      const x = xOf(canvas, r); const removed = evs[e] & 1;
      if (!removed && x - lastX < 1) continue; lastX = x;
      if (removed) glyph(g, 'x', x, mid, REMOVE, 3.5);
      else if (aggregate) { g.fillStyle = AGG; g.fillRect(x - 1, mid - 6, 2, 12); }
      else glyph(g, 'circle', x, mid, CHANGE, 3.5);
    }
    html += '<div class="lane' + (sel ? ' selected' : '') + '" style="top:' + y + 'px;padding-left:' + (6 + P.depth[i] * 14) + 'px" data-node="' + i + '">' +
      '<span class="toggle" data-toggle="' + i + '">' + (hasChildren(i) && !filterText ? (expanded[i] ? '\u25BE' : '\u25B8') : '') + '</span>' +
      '<span class="name" title="' + esc(fullPath(i)) + '">' + esc(P.name[i]) + '</span>' +
      (hasChildren(i) ? '<span class="count">' + fmt(P.end[i] - i - 1) + '</span>' : '') + '</div>';
  }
  labels.innerHTML = html;
  drawSelection(g, canvas, 0, h);
}
lanes.addEventListener('scroll', () => requestAnimationFrame(drawLanes));
labels.addEventListener('click', ev => {
  const t = ev.target.closest('[data-toggle]');
  if (t && t.textContent) { const i = Number(t.dataset.toggle); expanded[i] ^= 1; rebuildRows(); return; }
  const lane = ev.target.closest('[data-node]'); if (!lane) return;
  const i = Number(lane.dataset.node); const evs = hasChildren(i) && !expanded[i] ? subtreeEvents(i) : ownEvents(i);
  if (evs.length) select({ node: i, row: evs[evs.length - 1] >> 1 });
});
$('filter').addEventListener('input', ev => { filterText = ev.target.value.trim(); lanes.scrollTop = 0; rebuildRows(); });
$('collapse-all').addEventListener('click', () => { expanded.fill(0); $('filter').value = ''; filterText = ''; rebuildRows(); });

// ---- details ---------------------------------------------------------------------------
let byRow = null;
function changesAt(row) {
  if (!byRow) { byRow = new Map(); for (let i = 0; i < N; i++) for (let e = P.start[i]; e < P.start[i + 1]; e++) {
    const r = P.events[e] >> 1; let list = byRow.get(r); if (!list) byRow.set(r, list = []); list.push(i); } }
  return byRow.get(row) || [];
}
function nodeVersionAt(i, row) {
  const h = versionsOf(i); const k = h.findIndex(x => x.row === row); if (k < 0) return null;
  let prev = null; for (let j = k - 1; j >= 0; j--) { prev = h[j]; break; }
  return { at: h[k], prev, all: h };
}
const vOrNull = x => x && !x.removed ? version(x.v) : null;
function epochHeader(row) {
  const md = meta(row); let text = 'Epoch ' + M.epochs.n[row] + ', committed ' + iso(M.epochs.t[row]);
  for (const k of Object.keys(md).sort()) if (k !== 'restorationReport') text += '\n  ' + printable(k) + ': ' + printable(md[k]);
  if (md.restorationReport) text += '\n  restorationReport: (recorded, shown below)';
  return text;
}
function pill(kind) { return '<span class="pill" style="background:' + KIND_COLOR[KINDS.indexOf(kind)] + '">' + esc(KIND_LABEL[kind] || kind) + '</span>'; }
function jump(row, node, text) { return '<a class="jump" data-row="' + row + '"' + (node != null ? ' data-node="' + node + '"' : '') + '>' + esc(text) + '</a>'; }
function renderEpoch(row) {
  let html = '<h3>Epoch ' + fmt(M.epochs.n[row]) + ' ' + pill(kindOf(row)) + '</h3>';
  html += '<div class="muted">' + fmt(M.epochs.c[row]) + ' entries · ' + bytes(M.epochs.b[row]) + ' · ' + iso(M.epochs.t[row]) + '</div>';
  html += '<h3>Show</h3><div class="cmd">statejournal show ' + esc(shq(M.store)) + ' --epoch ' + M.epochs.n[row] + '</div><pre>' + esc(epochHeader(row)) + '</pre>';
  for (const m of M.markers) if (m.row === row) html += '<p>' + svgGlyph(m.type) + ' ' + esc(m.text) + '</p>';
  for (const c of M.compactions) if (c.row === row) html += '<p>' + svgDiamond() + ' Checkpoint ' + esc(c.file) + ' (' + bytes(c.bytes) + ')' + (c.written ? ', written ' + iso(c.written) : '') + ': the state as of this epoch, folded by a compaction.</p>';
  const outage = outageAt(row);
  if (outage) html += '<h3>After an outage</h3><p>The store refused saves from ' + esc(iso(outage.started)) + ' (' + esc(outage.reason) + '); this catch-up pass saved every live object again, ' + esc(duration(M.epochs.t[row] - outage.started)) + ' later.</p>';
  const li = launches.findIndex(l => l.began === row || l.completed === row);
  if (li >= 0) html += '<h3>Launch ' + (li + 1) + '</h3>' + reportHTML(launches[li], li, 25);
  const changed = changesAt(row);
  if (changed.length) {
    html += '<h3>Changes in this epoch (' + fmt(changed.length) + ')</h3><div class="cmd">statejournal diff ' + esc(shq(M.store)) + ' ' + (row > 0 ? M.epochs.n[row - 1] : M.epochs.n[row]) + ' ' + M.epochs.n[row] + '</div><pre>';
    const shown = changed.slice(0, 60);
    html += shown.map(i => { const h = nodeVersionAt(i, row); return diffHTML(fullPath(i), vOrNull(h.prev), vOrNull(h.at), row); }).join('\n');
    if (changed.length > shown.length) html += '\n<span class="muted">\u2026 and ' + fmt(changed.length - shown.length) + ' more</span>';
    html += '</pre>';
  } else html += '<p class="muted">This epoch changed no path.</p>';
  return html;
}
function renderPathAt(i, row) {
  const path = fullPath(i); let html = '<h3><span style="font-family:var(--mono)">' + esc(path) + '</span></h3>';
  html += '<div class="muted">at epoch ' + jump(row, null, fmt(M.epochs.n[row])) + ' ' + pill(kindOf(row)) + '</div>';
  if (hasChildren(i) && !expanded[i] && !filterText) {
    const inside = changesAt(row).filter(j => j >= i && j < P.end[i]);
    html += '<h3>Changes under this subtree (' + fmt(inside.length) + ')</h3><pre>';
    html += inside.slice(0, 60).map(j => { const h = nodeVersionAt(j, row); return diffHTML(fullPath(j), vOrNull(h.prev), vOrNull(h.at), row); }).join('\n');
    if (inside.length > 60) html += '\n<span class="muted">\u2026 and ' + fmt(inside.length - 60) + ' more</span>';
    return html + '</pre>';
  }
  const h = nodeVersionAt(i, row);
  if (!h) return html + '<p class="muted">This path was not written at this epoch.</p>';
  const now = vOrNull(h.at), before = vOrNull(h.prev);
  html += '<h3>State</h3><div class="cmd">statejournal show ' + esc(shq(M.store)) + ' --epoch ' + M.epochs.n[row] + ' --path ' + esc(shq(path)) + '</div>';
  html += '<pre>' + esc(now ? showText(path, now, row) : '(removed at this epoch)') + '</pre>';
  html += '<h3>Diff from its previous version</h3>';
  html += '<div class="cmd">' + (h.prev ? 'statejournal diff ' + esc(shq(M.store)) + ' ' + M.epochs.n[h.prev.row] + ' ' + M.epochs.n[row] : 'first retained version') + '</div>';
  html += '<pre>' + diffHTML(path, before, now, row) + '</pre>';
  html += '<h3>Every retained version (' + h.all.length + ')</h3><div>' + h.all.slice(-80).map(x => jump(x.row, i, (x.removed ? '\u2715 ' : '') + M.epochs.n[x.row])).join(' · ') + '</div>';
  return html;
}
const REASON_TEXT = { declined: 'its restoration class returned nil', ancestorDeclined: 'an ancestor was not restored: ',
  unregistered: 'restoration class not registered: ', notFound: 'no restoration class, delegate answer or existing object',
  corrupt: 'the entry could not be decoded: ', migrationFailed: 'a migration failed: ' };
const DIAG_TEXT = { classMismatch: 'class mismatch', decodeFailed: 'decode failed', createdWithoutParent: 'created without a parent',
  unfinished: 'unfinished earlier attempt', outsideHierarchy: 'outside the hierarchy' };
function reportHTML(l, k, limit) {
  const r = l.report; let html = '<div class="muted">restoring epoch ' + (l.restoring != null ? jump(rowOfEpoch(l.restoring), null, fmt(l.restoring)) : '?') +
    ' · began at epoch ' + jump(l.began, null, fmt(M.epochs.n[l.began])) + ' · ' + (l.completed != null ? 'completed at epoch ' + jump(l.completed, null, fmt(M.epochs.n[l.completed])) : '<b>never completed</b>') + '</div>';
  if (!r) return html + '<p class="note">Report not recorded' + (l.completed == null ? ' (the restoration never completed).' : ' (this marker was written before restoration reports were recorded).') + '</p>';
  if (r.error) return html + '<p class="note">Report not readable: ' + esc(r.error) + '</p>';
  html += '<div class="counts"><span>reason: <b>' + esc(r.reason || 'unknown') + '</b></span><span><b>' + fmt(r.restoredCount) + '</b> restored</span><span><b>' + fmt(r.skippedCount) + '</b> skipped</span><span><b>' + fmt(r.diagnosticCount) + '</b> diagnostics</span></div>';
  const migrated = r.restored.filter(x => x[4]).length;
  if (migrated) html += '<div class="muted">' + fmt(migrated) + ' restored after a migration was applied</div>';
  const more = (list, total) => list.length < total ? '<p class="note">' + fmt(total - list.length) + ' more not listed (the marker keeps at most 8 KiB; the count is complete).</p>' : '';
  if (r.skipped.length) html += '<table><tr><th>skipped</th><th>why</th></tr>' + r.skipped.slice(0, limit).map(s => '<tr><td class="path">' + esc(s[0]) + '</td><td>' + esc((REASON_TEXT[s[2]] || s[2]) + (REASON_TEXT[s[2]] && REASON_TEXT[s[2]].endsWith(': ') ? s[3] : '')) + (s[1] ? ' <span class="muted">(' + esc(s[1]) + ')</span>' : '') + '</td></tr>').join('') + '</table>' + more(r.skipped.slice(0, limit), r.skippedCount);
  if (r.diagnostics.length) html += '<table><tr><th>diagnostic</th><th>what</th></tr>' + r.diagnostics.slice(0, limit).map(d => '<tr><td>' + esc(DIAG_TEXT[d[0]] || d[0]) + '</td><td>' + esc(d[2]) + '</td></tr>').join('') + '</table>' + more(r.diagnostics.slice(0, limit), r.diagnosticCount);
  if (r.restored.length) html += '<table><tr><th>restored</th><th>type</th><th>how</th></tr>' + r.restored.slice(0, limit).map(x => '<tr><td class="path">' + esc(x[0]) + '</td><td>' + esc(x[1].split('.').pop()) + '</td><td>' + esc(x[2] + (x[3] === 'decoded' ? '' : ', not decoded') + (x[4] ? ', migrated' : '')) + '</td></tr>').join('') + '</table>' + more(r.restored.slice(0, limit), r.restoredCount);
  return html;
}
function rowOfEpoch(n) { let lo = 0, hi = E - 1; while (lo < hi) { const mid = (lo + hi) >> 1; if (M.epochs.n[mid] < n) lo = mid + 1; else hi = mid; } return lo; }
function select(sel) {
  selection = sel;
  const hash = '#epoch=' + M.epochs.n[sel.row] + (sel.node != null ? '&path=' + encodeURIComponent(fullPath(sel.node)) : '');
  if (location.hash !== hash) history.replaceState(null, '', hash);
  $('detail-body').innerHTML = sel.node != null ? renderPathAt(sel.node, sel.row) : renderEpoch(sel.row);
  drawAll();
}
$('detail-body').addEventListener('click', ev => { const a = ev.target.closest('a.jump'); if (!a) return;
  const row = Number(a.dataset.row); select(a.dataset.node != null ? { node: Number(a.dataset.node), row } : { row }); ensureVisible(row); });
$('launch-list').addEventListener('click', ev => { const a = ev.target.closest('a.jump'); if (!a) return; const row = Number(a.dataset.row); select({ row }); ensureVisible(row); });
function ensureVisible(row) { if (row < view.lo || row > view.hi) { const span = view.hi - view.lo; view.lo = Math.max(0, row - span / 2); view.hi = Math.min(E, view.lo + span); drawAll(); } }

// ---- interaction: zoom, pan, click -------------------------------------------------------
function attach(canvas, onClick) {
  let drag = null;
  canvas.addEventListener('wheel', ev => {
    if (ev.clientX - canvas.getBoundingClientRect().left < GUTTER) return;
    ev.preventDefault();
    const x = ev.clientX - canvas.getBoundingClientRect().left; const anchor = view.lo + (x - GUTTER) / plotWidth(canvas) * (view.hi - view.lo);
    const f = Math.exp((ev.deltaY || ev.deltaX) * 0.0015); let span = Math.min(E, Math.max(8, (view.hi - view.lo) * f));
    view.lo = Math.max(0, Math.min(E - span, anchor - (anchor - view.lo) * span / (view.hi - view.lo))); view.hi = view.lo + span; drawAll();
  }, { passive: false });
  canvas.addEventListener('mousedown', ev => { drag = { x: ev.clientX, lo: view.lo, moved: false }; });
  window.addEventListener('mousemove', ev => { if (!drag) return; const dx = ev.clientX - drag.x; if (Math.abs(dx) > 3) drag.moved = true;
    if (!drag.moved) return; const span = view.hi - view.lo; view.lo = Math.max(0, Math.min(E - span, drag.lo - dx / plotWidth(canvas) * span)); view.hi = view.lo + span; drawAll(); });
  window.addEventListener('mouseup', ev => { if (!drag) return; const d = drag; drag = null;
    if (!d.moved && ev.target === canvas) { const rect = canvas.getBoundingClientRect(); onClick(ev.clientX - rect.left, ev.clientY - rect.top); } });
}
function nearestRow(canvas, x) { const r = Math.round(view.lo + (x - GUTTER) / plotWidth(canvas) * (view.hi - view.lo) - 0.5); return Math.max(0, Math.min(E - 1, r)); }
// Over an outage's band, a canvas's tooltip says when the store was unavailable and why.
for (const id of ['epochs-canvas', 'size-canvas', 'lanes-canvas']) {
  const canvas = $(id);
  canvas.addEventListener('mousemove', ev => { const rect = canvas.getBoundingClientRect(); const x = ev.clientX - rect.left;
    const o = outageUnder(canvas, x); const t = !o && id === 'epochs-canvas' && E ? termUnder(canvas, x, ev.clientY - rect.top) : null;
    const title = o ? outageText(o) : t ? t.text : ''; if (canvas.title !== title) canvas.title = title; });
}
attach($('epochs-canvas'), (x, y) => { if (x < GUTTER || !E) return;
  if (y < 18) { const row = nearestRow($('epochs-canvas'), x); const b = bands.find(band => row >= band.from && row <= band.to);
    if (b && b.launch >= 0) { const el = document.getElementById('launch-' + b.launch); if (el) { el.open = true; el.scrollIntoView({ behavior: 'smooth' }); } return; } }
  const o = outageUnder($('epochs-canvas'), x);
  select({ row: o ? o.to : nearestRow($('epochs-canvas'), x) }); });
attach($('size-canvas'), x => { if (x >= GUTTER && E) select({ row: nearestRow($('size-canvas'), x) }); });
attach($('lanes-canvas'), (x, y) => {
  if (x < GUTTER) return; const canvas = $('lanes-canvas');
  const k = Math.floor((y + lanes.scrollTop - 4) / ROW_H); if (k < 0 || k >= rows.length) return; const i = rows[k];
  const evs = hasChildren(i) && !expanded[i] && !filterText ? subtreeEvents(i) : ownEvents(i);
  let best = -1, bestD = 7; for (let e = 0; e < evs.length; e++) { const d = Math.abs(xOf(canvas, evs[e] >> 1) - x); if (d < bestD) { bestD = d; best = evs[e] >> 1; } }
  if (best >= 0) select({ node: i, row: best }); else select({ row: nearestRow(canvas, x) });
});
$('reset-zoom').addEventListener('click', () => { view.lo = 0; view.hi = Math.max(E, 1); drawAll(); });
let pending = false;
function drawAll() { if (pending) return; pending = true; requestAnimationFrame(() => { pending = false; drawEpochs(); drawSize(); drawLanes(); }); }
window.addEventListener('resize', () => { rebuildRows(); drawAll(); });

// ---- legend, header, launches ----------------------------------------------------------
function svgGlyph(type) { const s = MARKER[type] || MARKER.damage; const c = s.color;
  const shape = s.shape === 'tri' ? '<path d="M2 3h10L7 12z" fill="' + c + '"/>' : s.shape === 'x' ? '<path d="M3 3l8 8M11 3l-8 8" stroke="' + c + '" stroke-width="2"/>' : '<rect x="3" y="3" width="8" height="8" fill="' + c + '"/>';
  return '<svg width="14" height="14" viewBox="0 0 14 14" aria-hidden="true">' + shape + '</svg>'; }
function svgDiamond() { return '<svg width="14" height="14" viewBox="0 0 14 14" aria-hidden="true"><path d="M7 1l6 6-6 6-6-6z" fill="' + COMPACTION_COLOR + '"/></svg>'; }
function legend() {
  const present = new Set(M.epochs.k);
  let html = '<div class="group"><b>Epochs</b>' + KINDS.map((k, i) => '<span class="item" style="opacity:' + (present.has(i) ? 1 : .45) + '"><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" rx="2" fill="' + KIND_COLOR[i] + '"/></svg>' + esc(KIND_LABEL[k] || k) + '</span>').join('') + '</div>';
  html += '<div class="group"><b>Markers</b>' + Object.keys(MARKER).map(t => '<span class="item">' + svgGlyph(t) + esc(MARKER[t].label) + '</span>').join('') + '<span class="item">' + svgDiamond() + 'compaction</span></div>';
  html += '<div class="group"><b>Lanes</b><span class="item"><svg width="12" height="12" aria-hidden="true"><circle cx="6" cy="6" r="4" fill="' + CHANGE + '"/></svg>changed</span><span class="item"><svg width="12" height="12" aria-hidden="true"><path d="M2 2l8 8M10 2l-8 8" stroke="' + REMOVE + '" stroke-width="2"/></svg>removed</span><span class="item"><svg width="12" height="12" aria-hidden="true"><rect x="5" y="0" width="2" height="12" fill="' + AGG + '"/></svg>inside a collapsed subtree</span><span class="item"><svg width="18" height="12" aria-hidden="true"><rect width="18" height="12" fill="rgba(47,111,214,0.12)" stroke="rgba(47,111,214,0.5)" stroke-dasharray="2 2"/></svg>launch</span><span class="item"><svg width="18" height="12" aria-hidden="true"><rect width="18" height="12" fill="rgba(214,47,47,0.16)"/><rect width="18" height="3" fill="rgba(214,47,47,0.8)"/></svg>store unavailable, until the catch-up pass</span></div>';
  $('legend').innerHTML = html;
}
function header() {
  let total = 0; for (let r = 0; r < E; r++) total += M.epochs.b[r];
  const set = (id, value, text) => { const el = $(id); el.dataset.value = String(value); el.textContent = text; };
  set('stat-epochs', E, fmt(E)); set('stat-latest', E ? M.epochs.n[E - 1] : '', E ? fmt(M.epochs.n[E - 1]) : 'none');
  set('stat-bytes', total, bytes(total)); $('stat-bytes').title = fmt(total) + ' bytes';
  set('stat-disk', M.files.totalBytes, bytes(M.files.totalBytes)); set('stat-objects', M.files.liveObjects, fmt(M.files.liveObjects));
  set('stat-paths', N, fmt(N)); set('stat-launches', launches.length, fmt(launches.length));
  $('store-path').textContent = M.store;
  $('footer').textContent = 'Written by statejournal timeline at ' + M.generated + ' · ' + fmt(M.files.segments) + ' segments (' + bytes(M.files.segmentBytes) + '), ' +
    fmt(M.compactions.length) + ' checkpoints (' + bytes(M.files.checkpointBytes) + '), manifest generation ' + M.files.generation + ' · ' +
    fmt(M.archive.versions) + ' states embedded' + (M.archive.omitted ? ' (' + fmt(M.archive.omitted) + ' older ones left out to bound the page)' : '') + '.';
}
function launchList() {
  if (!launches.length) { $('launch-list').innerHTML = '<p class="muted">No restoration markers in the retained history: the app never restored, or compaction folded its markers.</p>'; return; }
  $('launch-list').innerHTML = launches.map((l, k) => '<details class="launch" id="launch-' + k + '"' + (k === launches.length - 1 ? ' open' : '') + '><summary><span class="title">Launch ' + (k + 1) + esc(sceneTag(l) + launchTag(l)) + '</span><span class="muted">epoch ' + fmt(M.epochs.n[l.began]) + ' · ' + iso(M.epochs.t[l.began]) + '</span>' +
    (l.report && !l.report.error ? '<span class="counts"><span>' + fmt(l.report.restoredCount) + ' restored</span><span>' + fmt(l.report.skippedCount) + ' skipped</span><span>' + fmt(l.report.diagnosticCount) + ' diagnostics</span></span>' : '<span class="note">report not recorded</span>') +
    '</summary><div class="body">' + reportHTML(l, k, 200) + '</div></details>').join('');
}

// A link to one selection: #epoch=N, or #epoch=N&path=A/B to a path at that epoch.
function followHash() {
  const params = new URLSearchParams(location.hash.slice(1)); if (!params.has('epoch') || !E) return;
  const row = rowOfEpoch(Number(params.get('epoch'))); if (M.epochs.n[row] !== Number(params.get('epoch'))) return;
  let node = null; const path = params.get('path');
  if (path != null) { for (let i = 0; i < N; i++) if (fullPath(i) === path) { node = i; break; }
    for (let a = node == null ? -1 : parentOf[node]; a >= 0; a = parentOf[a]) expanded[a] = 1; rebuildRows();
    const k = rows.indexOf(node); if (k >= 0) lanes.scrollTop = Math.max(0, k * ROW_H - 60); }
  select(node != null ? { node, row } : { row }); ensureVisible(row);
}
legend(); header(); launchList(); expandInitially(); rebuildRows(); drawEpochs(); drawSize(); followHash();
const elapsed = performance.now();
$('stat-load').textContent = elapsed < 1000 ? Math.round(elapsed) + ' ms' : (elapsed / 1000).toFixed(2) + ' s';
document.body.dataset.loadMs = String(Math.round(elapsed));
document.body.dataset.rendered = '1';
})();
