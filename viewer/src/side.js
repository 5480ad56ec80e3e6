// The side panel: runs, layers, forces (scaling and gain), camera (followed body, viewpoints,
// saving one), bodies, and the visual elements that could not be loaded with the reason.
import { RUN_COLORS } from './view.js';

function checkbox(parent, text, on, change, color) {
  const l = document.createElement('label');
  const c = document.createElement('input');
  c.type = 'checkbox'; c.checked = on;
  c.addEventListener('change', () => change(c.checked));
  l.appendChild(c);
  if (color) { const s = document.createElement('span'); s.textContent = '■ '; s.style.color = color; l.appendChild(s); }
  l.appendChild(document.createTextNode(text));
  l.title = text;
  parent.appendChild(l);
  return l;
}

function heading(parent, text) {
  const h = document.createElement('h3'); h.textContent = text; parent.appendChild(h);
}

function select(parent, id, options, value, change) {
  const s = document.createElement('select');
  s.id = id;
  for (const [v, text] of options) {
    const o = document.createElement('option');
    o.value = String(v); o.textContent = text;
    s.appendChild(o);
  }
  s.value = String(value);
  s.addEventListener('change', () => change(s.value));
  parent.appendChild(s);
  return s;
}

// saved viewpoints live in the browser's local storage, per scene
function storedViews(key) {
  try { return JSON.parse(localStorage.getItem(key) || '[]'); } catch (e) { return []; }
}

function cameraSection(side, view, data, redraw) {
  heading(side, 'camera');
  const bodies = [[-1, 'free (no follow)']];
  data.bodies.forEach((name, b) => { if (b > 0) bodies.push([b, name]); });
  const l = document.createElement('label'); l.textContent = 'follow ';
  side.appendChild(l);
  select(l, 'follow', bodies, view.follow, (v) => { view.setFollow(Number(v)); redraw(); });
  const key = `moreau-views ${data.scene}`;
  let saved = storedViews(key);
  const v = document.createElement('label'); v.textContent = 'view ';
  side.appendChild(v);
  const views = () => [['fitted', 'fitted'], ['front', 'front'], ['side', 'side'], ['back', 'back'],
    ['top', 'top'], ...saved.map((s, i) => [`saved${i}`, s.name])];
  let sel = select(v, 'views', views(), 'fitted', (x) => {
    view.setView(x.startsWith('saved') ? saved[Number(x.slice(5))] : x);
  });
  const save = document.createElement('button');
  save.textContent = 'save view';
  save.title = 'remember this viewpoint (relative to the followed body) in this browser';
  save.addEventListener('click', () => {
    saved.push({ name: `view ${saved.length + 1}`, ...view.currentView() });
    try { localStorage.setItem(key, JSON.stringify(saved)); } catch (e) { /* private mode */ }
    sel.remove();
    sel = select(v, 'views', views(), `saved${saved.length - 1}`, (x) => {
      view.setView(x.startsWith('saved') ? saved[Number(x.slice(5))] : x);
    });
  });
  side.appendChild(save);
}

function forcesSection(side, view, redraw) {
  heading(side, 'forces');
  const l = document.createElement('label'); l.textContent = 'scale ';
  side.appendChild(l);
  select(l, 'force-scale', [['frame', 'per frame'], ['run', 'whole run'], ['log', 'log']],
    view.arrows.mode, (m) => { view.arrows.mode = m; redraw(); });
  const gain = document.createElement('label');
  gain.textContent = 'length ';
  const g = document.createElement('input');
  g.type = 'range'; g.min = '-2'; g.max = '2'; g.step = '0.1'; g.value = '0';
  g.addEventListener('input', () => { view.arrows.gain = Math.pow(10, Number(g.value)); redraw(); });
  gain.appendChild(g);
  side.appendChild(gain);
}

function missingSection(side, data) {
  const missing = data.missing || [];
  if (!missing.length) return;
  heading(side, `visuals not loaded (${missing.length})`);
  const p = document.createElement('div');
  p.id = 'missing';
  p.style.fontSize = '12px';
  for (const m of missing) {
    const d = document.createElement('div');
    d.textContent = `${m.link}: ${m.reason}`;
    p.appendChild(d);
  }
  side.appendChild(p);
}

// the notice over the view: which links are drawn from collision geometry, and why
export function showNotice(data) {
  const missing = data.missing || [];
  const n = document.getElementById('notice');
  if (!missing.length || !n) return;
  const links = [...new Set(missing.map((m) => m.link))];
  n.textContent = `${missing.length} visual element(s) of ${links.length} link(s) could not be ` +
    `loaded; those links are drawn with their collision geometry. First: ${missing[0].link}: ` +
    `${missing[0].reason}. (Click to close; the list is in the side panel.)`;
  n.addEventListener('click', () => { n.textContent = ''; });
}

export function buildSide(view, data, runs, onRuns, redraw) {
  const side = document.getElementById('side');
  heading(side, (data.scene || 'live').split('/').pop());
  if (runs.length > 1 || runs[0]?.name !== 'live') {
    heading(side, 'runs');
    runs.forEach((r, k) => {
      const l = checkbox(side, `${r.name} (${r.status})`, !r.hidden, (on) => {
        r.hidden = !on; view.applyVisibility(); onRuns(); redraw();
      }, RUN_COLORS[k % RUN_COLORS.length]);
      l.className = 'run';
    });
  }
  heading(side, 'show');
  for (const [key, text] of [['collision', 'collision geometry'], ['visual', 'visual meshes'],
    ['contacts', 'contacts and forces'], ['static', 'world geometry'], ['shadows', 'shadows']])
    checkbox(side, text, view.layers[key], (on) => { view.layers[key] = on; view.applyVisibility(); redraw(); });
  forcesSection(side, view, redraw);
  cameraSection(side, view, data, redraw);
  missingSection(side, data);
  heading(side, 'bodies');
  const withShapes = new Set(data.geoms.map((x) => x.body));
  data.bodies.forEach((name, b) => {
    if (b === 0 || !withShapes.has(b)) return;
    checkbox(side, name, !view.isHidden(name), (on) => {
      if (on) view.hidden.delete(name); else view.hidden.add(name);
      view.applyVisibility(); redraw();
    });
  });
}
