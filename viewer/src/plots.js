// Step plots on 2D canvases: one panel per figure, every run's series in its colour, a cursor at
// the current time; clicking or dragging in a panel moves the time. Series are drawn once per
// resize into an offscreen canvas (per pixel column the min and max of the samples falling in
// it, so that no spike is lost); moving the cursor only copies that image.

const FIGURES = [
  { key: 'energy', title: 'energy (J)' },
  { key: 'penetration', title: 'penetration (m)' },
  { key: 'eps_abs', title: 'ε_abs (N)', log: true },
  { key: 'iterations', title: 'iterations' },
  { key: 'contacts', title: 'contacts' },
];

const PAD = { l: 46, r: 14, t: 16, b: 16 };

function range(runs, key, log) {
  let lo = Infinity, hi = -Infinity;
  for (const r of runs)
    for (const x of r.stats[key]) {
      if (!Number.isFinite(x) || (log && x <= 0)) continue;
      const y = log ? Math.log10(x) : x;
      if (y < lo) lo = y;
      if (y > hi) hi = y;
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

// min/max per pixel column of one series
function drawSeries(ctx, t, y, log, sx, sy, color) {
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
  for (let i = 0; i < t.length; ++i) {
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
  constructor(parent, fig, runs, colors, tmax, onSeek) {
    Object.assign(this, { fig, runs, colors, tmax });
    this.canvas = document.createElement('canvas');
    parent.appendChild(this.canvas);
    this.image = document.createElement('canvas');
    const seek = (e) => {
      const r = this.canvas.getBoundingClientRect();
      const x = (e.clientX - r.left) * this.canvas.width / r.width;
      onSeek(Math.min(tmax, Math.max(0, (x - PAD.l) / this.w * tmax)));
    };
    this.canvas.addEventListener('pointerdown', (e) => { this.drag = true; seek(e); });
    this.canvas.addEventListener('pointermove', (e) => { if (this.drag) seek(e); });
    window.addEventListener('pointerup', () => { this.drag = false; });
  }

  render() {
    const c = this.canvas, W = c.clientWidth, H = c.clientHeight;
    if (!W || !H) return;
    c.width = W; c.height = H;
    this.image.width = W; this.image.height = H;
    this.w = W - PAD.l - PAD.r;
    const h = H - PAD.t - PAD.b;
    const ctx = this.image.getContext('2d');
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, H);
    ctx.fillStyle = '#222'; ctx.font = '11px system-ui, sans-serif';
    ctx.fillText(this.fig.title, PAD.l, 11);
    const rg = range(this.runs, this.fig.key, this.fig.log);
    ctx.strokeStyle = '#bbb'; ctx.strokeRect(PAD.l + 0.5, PAD.t + 0.5, this.w, h);
    if (!rg) { ctx.fillText('not recorded', PAD.l + 6, PAD.t + 14); return; }
    // the data's range, labelled, inside 5 % margins so that a flat line stays off the frame
    const [lo, hi] = rg, pad = 0.05 * (hi - lo);
    const sx = (t) => PAD.l + t / this.tmax * this.w;
    const sy = (y) => PAD.t + h - (y - lo + pad) / (hi - lo + 2 * pad) * h;
    ctx.fillText(label(hi, this.fig.log), 2, sy(hi) + 4);
    ctx.fillText(label(lo, this.fig.log), 2, sy(lo) + 4);
    this.runs.forEach((r, k) => {
      if (r.hidden) return;
      drawSeries(ctx, r.stats.t, r.stats[this.fig.key], this.fig.log, sx, sy, this.colors[k]);
    });
  }

  cursor(t) {
    const ctx = this.canvas.getContext('2d');
    if (!this.image.width) return;
    ctx.drawImage(this.image, 0, 0);
    const x = Math.round(PAD.l + t / this.tmax * this.w) + 0.5;
    ctx.strokeStyle = '#d22'; ctx.beginPath();
    ctx.moveTo(x, PAD.t); ctx.lineTo(x, this.canvas.height - PAD.b); ctx.stroke();
  }
}

export function makePlots(parent, runs, colors, tmax, onSeek) {
  const panels = FIGURES.map((f) => new Panel(parent, f, runs, colors, tmax, onSeek));
  return {
    render() { for (const p of panels) p.render(); },
    cursor(t) { for (const p of panels) p.cursor(t); },
  };
}
