// Two small hand-drawn SVG charts for the Overview tab, from
// GET /api/v1/clusters/{name}/metrics (one Sample every periodSeconds).

import {h, svg} from './dom.js';

const WIDTH = 520;
const HEIGHT = 170;
const PAD = {left: 34, right: 10, top: 10, bottom: 22};

// Node states, bottom to top of the stack, with their colours.
export const NODE_SERIES = [
  {key: 'idle', label: 'idle', color: '#3fa46a'},
  {key: 'mixed', label: 'mixed', color: '#7fb6e8'},
  {key: 'allocated', label: 'allocated', color: '#2d6fb7'},
  {key: 'drained', label: 'drained', color: '#e0a030'},
  {key: 'down', label: 'down', color: '#d04b3f'},
  {key: 'other', label: 'other', color: '#9a9a9a'},
];

export const QUEUE_SERIES = [
  {key: 'running', label: 'running', color: '#2d6fb7'},
  {key: 'pending', label: 'pending', color: '#e0a030'},
];

// A chart card: title, SVG, legend with the latest values.
// `stacked`: areas stacked on each other (node states); else one line each.
export function chart({title, testid, samples, pick, series, stacked, periodSeconds}) {
  const points = samples.map((s) => ({t: s.time, v: pick(s) || {}}));
  const latest = points.length ? points[points.length - 1].v : {};
  const legend = h('ul', {class: 'legend'}, series.map((s) =>
    h('li', {},
      h('span', {class: 'swatch', style: `background:${s.color}`}),
      `${s.label} `, h('b', {}, String(latest[s.key] ?? 0)))));
  const body = points.length === 0
    ? h('p', {class: 'muted chart-empty'},
      `No samples yet. corrald takes one every ${periodSeconds || 10} s while the cluster is Running.`)
    : drawChart(points, series, stacked, title, (periodSeconds || 10) * 1000);
  return h('figure', {class: 'chart', testid},
    h('figcaption', {}, title), body, legend);
}

function drawChart(points, series, stacked, title, periodMs) {
  // One sample: draw it as one period wide, so that it shows as a band.
  if (points.length === 1) points = [{t: points[0].t - periodMs, v: points[0].v}, points[0]];
  const t0 = points[0].t;
  const t1 = points[points.length - 1].t;
  // Highest value on the y axis: the stack's top or the highest line.
  let top = 0;
  for (const p of points) {
    if (stacked) top = Math.max(top, series.reduce((sum, s) => sum + (p.v[s.key] || 0), 0));
    else for (const s of series) top = Math.max(top, p.v[s.key] || 0);
  }
  const yMax = niceCeiling(Math.max(top, 1));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (t) => PAD.left + ((t - t0) / Math.max(t1 - t0, 1)) * plotW;
  const y = (v) => PAD.top + plotH - (v / yMax) * plotH;

  const parts = [svg('title', {}, title)];
  // Grid lines and y labels at 0, half and the top.
  for (const v of [0, yMax / 2, yMax]) {
    parts.push(svg('line', {x1: PAD.left, x2: WIDTH - PAD.right, y1: y(v), y2: y(v), class: 'grid'}));
    parts.push(svg('text', {x: PAD.left - 4, y: y(v) + 4, class: 'axis', 'text-anchor': 'end'},
      Number.isInteger(v) ? String(v) : v.toFixed(1)));
  }
  // x labels: the first and last sample's clock time.
  const clock = (t) => new Date(t).toTimeString().slice(0, 5);
  parts.push(svg('text', {x: PAD.left, y: HEIGHT - 6, class: 'axis'}, clock(points[0].t)));
  parts.push(svg('text', {x: WIDTH - PAD.right, y: HEIGHT - 6, class: 'axis', 'text-anchor': 'end'},
    clock(points[points.length - 1].t)));

  if (stacked) {
    // Each area runs along its upper edge and back along the one below it.
    const base = points.map(() => 0);
    for (const s of series) {
      const upper = points.map((p, i) => base[i] + (p.v[s.key] || 0));
      if (upper.some((u, i) => u !== base[i])) {
        const forward = points.map((p, i) => `${x(p.t).toFixed(1)},${y(upper[i]).toFixed(1)}`);
        const back = points.map((p, i) => `${x(p.t).toFixed(1)},${y(base[i]).toFixed(1)}`).reverse();
        parts.push(svg('polygon', {points: forward.concat(back).join(' '), fill: s.color,
          'fill-opacity': 0.85, class: `series series-${s.key}`}, svg('title', {}, s.label)));
      }
      upper.forEach((u, i) => { base[i] = u; });
    }
  } else {
    for (const s of series) {
      const line = points.map((p) => `${x(p.t).toFixed(1)},${y(p.v[s.key] || 0).toFixed(1)}`);
      if (line.length === 1) line.push(line[0]);
      parts.push(svg('polyline', {points: line.join(' '), fill: 'none', stroke: s.color,
        'stroke-width': 2, class: `series series-${s.key}`}, svg('title', {}, s.label)));
    }
  }
  return svg('svg', {viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: '100%', role: 'img',
    'aria-label': title}, parts);
}

// 1, 2, 5, 10, 20, 50, ... at or above `v`.
function niceCeiling(v) {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
