// Step plots on 2D canvases: one panel per figure, every run's series in its colour, a cursor at
// the current time; clicking or dragging in a panel moves the time (replays). Series are drawn
// into an offscreen canvas (per pixel column the min and max of the samples falling in it, so
// that no spike is lost) when the data or the time window change; moving the cursor only copies
// that image. A live page moves the window with the simulation (the plots scroll).
//
// A run's series are r.stats[key] (typed arrays of r.nstats samples, times in r.stats.t).

const FIGURES = [
  { key: 'energy', title: 'energy (J)' },
  { key: 'penetration', title: 'penetration (m)' },
  { key: 'eps_abs', title: 'ε_abs (N)', log: true },
  { key: 'iterations', title: 'iterations' },
  { key: 'contacts', title: 'contacts' },
];

const PAD = { l: 46, r: 14, t: 16, b: 16 };

// first sample at or after t (binary search on the sorted times)
function lowerBound(ts, n, t) {
  let lo = 0, hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ts[mid] < t) lo = mid + 1; else hi = mid;
  }
  return lo;
}

function range(runs, key, log, t0, t1) {
  let lo = Infinity, hi = -Infinity;
  for (const r of runs) {
    if (r.hidden) continue;
    const y = r.stats[key], ts = r.stats.t;
    for (let i = lowerBound(ts, r.nstats, t0); i < r.nstats && ts[i] <= t1; ++i) {
      const x = y[i];
      if (!Number.isFinite(x) || (log && x <= 0)) continue;
      const v = log ? Math.log10(x) : x;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  if (!(lo <= hi)) return null;
  if (hi - lo < 1e-12 * Math.max(1, Math.abs(hi))) { lo -= 0.5; hi += 0.5; }
  return [lo, hi];
}

function label(y, log) {
  const v = log ? Math.pow(10, y) : y;
  return Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-2 && v !== 0) ? v.toExponential(1)
    : String(Math.round(v * 100) / 100);
}

// min/max per pixel column of one series over the window
function drawSeries(ctx, r, key, log, sx, sy, color, t0, t1) {
  const t = r.stats.t, y = r.stats[key];
  ctx.strokeStyle = color;
  ctx.lineWidth = 1;
  ctx.beginPath();
  let col = NaN, mn = 0, mx = 0;
  const flush = () => {
    if (Number.isNaN(col)) return;
    ctx.moveTo(col + 0.5, sy(mn));
    ctx.lineTo(col + 0.5, sy(mx) - 0.5);
  };
  let prev = null;
  for (let i = lowerBound(t, r.nstats, t0); i < r.nstats && t[i] <= t1; ++i) {
    let v = y[i];
    if (!Number.isFinite(v) || (log && v <= 0)) continue;
    if (log) v = Math.log10(v);
    const c = Math.floor(sx(t[i]));
    if (c !== col) {
      flush();
      if (prev) { ctx.moveTo(prev[0] + 0.5, sy(prev[1])); ctx.lineTo(c + 0.5, sy(v)); }
      col = c; mn = v; mx = v;
    } else { mn = Math.min(mn, v); mx = Math.max(mx, v); }
    prev = [c, v];
  }
  flush();
  ctx.stroke();
}

class Panel {
  constructor(parent, fig, runs, colors, onSeek) {
    Object.assign(this, { fig, runs, colors, t0: 0, t1: 1 });
    this.canvas = document.createElement('canvas');
    parent.appendChild(this.canvas);
    this.image = document.createElement('canvas');
    const seek = (e) => {
      if (!onSeek) return;
      const r = this.canvas.getBoundingClientRect();
      const x = (e.clientX - r.left) * this.canvas.width / r.width;
      onSeek(this.t0 + Math.min(1, Math.max(0, (x - PAD.l) / this.w)) * (this.t1 - this.t0));
    };
    this.canvas.addEventListener('pointerdown', (e) => { this.drag = true; seek(e); });
    this.canvas.addEventListener('pointermove', (e) => { if (this.drag) seek(e); });
    window.addEventListener('pointerup', () => { this.drag = false; });
  }

  render(t0, t1) {
    this.t0 = t0; this.t1 = Math.max(t1, t0 + 1e-9);
    const c = this.canvas, W = c.clientWidth, H = c.clientHeight;
    if (!W || !H) return;
    if (c.width !== W || c.height !== H) { c.width = W; c.height = H; }
    if (this.image.width !== W || this.image.height !== H) { this.image.width = W; this.image.height = H; }
    this.w = W - PAD.l - PAD.r;
    const h = H - PAD.t - PAD.b;
    const ctx = this.image.getContext('2d');
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, H);
    ctx.fillStyle = '#222'; ctx.font = '11px system-ui, sans-serif';
    ctx.fillText(this.fig.title, PAD.l, 11);
    const rg = range(this.runs, this.fig.key, this.fig.log, this.t0, this.t1);
    ctx.strokeStyle = '#bbb'; ctx.strokeRect(PAD.l + 0.5, PAD.t + 0.5, this.w, h);
    if (!rg) { ctx.fillText('not recorded', PAD.l + 6, PAD.t + 14); return; }
    // the data's range, labelled, inside 5 % margins so that a flat line stays off the frame
    const [lo, hi] = rg, pad = 0.05 * (hi - lo);
    const sx = (t) => PAD.l + (t - this.t0) / (this.t1 - this.t0) * this.w;
    const sy = (y) => PAD.t + h - (y - lo + pad) / (hi - lo + 2 * pad) * h;
    ctx.fillText(label(hi, this.fig.log), 2, sy(hi) + 4);
    ctx.fillText(label(lo, this.fig.log), 2, sy(lo) + 4);
    this.runs.forEach((r, k) => {
      if (r.hidden) return;
      drawSeries(ctx, r, this.fig.key, this.fig.log, sx, sy, this.colors[k], this.t0, this.t1);
    });
  }

  cursor(t) {
    const ctx = this.canvas.getContext('2d');
    if (!this.image.width) return;
    ctx.drawImage(this.image, 0, 0);
    const x = Math.round(PAD.l + (t - this.t0) / (this.t1 - this.t0) * this.w) + 0.5;
    ctx.strokeStyle = '#d22'; ctx.beginPath();
    ctx.moveTo(x, PAD.t); ctx.lineTo(x, this.canvas.height - PAD.b); ctx.stroke();
  }
}

// the plots of runs over the window [t0, t1]; onSeek(t) when a panel is clicked (or null)
export function makePlots(parent, runs, colors, onSeek) {
  const panels = FIGURES.map((f) => new Panel(parent, f, runs, colors, onSeek));
  return {
    render(t0, t1) { for (const p of panels) p.render(t0, t1); },
    cursor(t) { for (const p of panels) p.cursor(t); },
  };
}
