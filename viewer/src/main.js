// moreau's replay page: the bodies of every run posed frame by frame, contact points with their
// normal (green) and friction (orange) force arrows, scaled by magnitude, a time slider with
// play/pause/speed, an orbit camera, visibility toggles, and step plots linked to the time.
//
// URL hash parameters (for links and tests): frame=N (a frame of the first run) or t=SECONDS,
// ui=0 (the 3D view only), hide=NAME,NAME (bodies, robots or runs by name), static=0 (no world
// geometry), contacts=0. Once the requested frame is drawn the page logs
// "moreau-viewer: ready frame=N t=T load_ms=MS" on the console.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { decode, frameAt } from './data.js';
import { shapeObject } from './shapes.js';
import { makePlots } from './plots.js';

THREE.Object3D.DEFAULT_UP.set(0, 0, 1);

const RUN_COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf',
  '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22'];
const BODY_COLORS = [0x4e79a7, 0xf28e2b, 0x59a14f, 0xb07aa1, 0xedc948, 0x76b7b2, 0xff9da7,
  0x9c755f, 0xe15759, 0xbab0ac];

const tStart = performance.now();
const params = new URLSearchParams(location.hash.slice(1));
const data = decode(document.getElementById('moreau-replay').textContent);
const tDecoded = performance.now();
const runs = data.runs;
const nb = data.bodies.length;
const tmax = Math.max(1e-9, ...runs.map((r) => (r.frame_t.length ? r.frame_t[r.frame_t.length - 1] : 0)));
const hidden = new Set((params.get('hide') || '').split(',').filter((s) => s));
const isHidden = (name) => hidden.has(name) || hidden.has(name.split('/')[0]);
for (const r of runs) r.hidden = isHidden(r.name);

// ---- renderer, camera, lights ----
const view = document.getElementById('view');
if (params.get('ui') === '0') document.body.classList.add('noui');
const renderer = new THREE.WebGLRenderer({ antialias: true });
renderer.setPixelRatio(window.devicePixelRatio || 1);
view.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0xffffff);
scene.add(new THREE.HemisphereLight(0xffffff, 0x667788, 2.0));
const sun = new THREE.DirectionalLight(0xffffff, 1.5);
sun.position.set(3, -2, 5);
scene.add(sun);
const camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
const controls = new OrbitControls(camera, renderer.domElement);

// ---- bodies ----
const hasVisual = data.geoms.some((g) => g.visual);
const layers = { collision: !hasVisual, visual: hasVisual, contacts: params.get('contacts') !== '0',
  static: params.get('static') !== '0' };

function material(g, runIndex) {
  let color = BODY_COLORS[g.body % BODY_COLORS.length];
  if (g.visual) color = g.rgba ? new THREE.Color(g.rgba[0], g.rgba[1], g.rgba[2]) : 0xb8bcc4;
  if (runs.length > 1 && g.body > 0) color = RUN_COLORS[runIndex % RUN_COLORS.length];
  const transparent = runs.length > 1 && g.body > 0;
  return new THREE.MeshLambertMaterial({ color, transparent, opacity: transparent ? 0.7 : 1 });
}

// the static geometry (body 0) once; the moving bodies once per run
const staticGroup = new THREE.Group();
scene.add(staticGroup);
const shapeObjects = []; // {object, geom}
function buildRun(run, k) {
  run.group = new THREE.Group();
  run.bodies = [];
  for (let b = 0; b < nb; ++b) {
    const g = new THREE.Group();
    g.matrixAutoUpdate = true;
    run.bodies.push(g);
    if (b > 0) run.group.add(g);
  }
  scene.add(run.group);
  return run;
}
runs.forEach(buildRun);

function addShapes() {
  for (const g of data.geoms) {
    if (g.body === 0) {
      const o = shapeObject(g, material(g, 0));
      if (o) { staticGroup.add(o); shapeObjects.push({ object: o, geom: g }); }
      continue;
    }
    runs.forEach((run, k) => {
      const o = shapeObject(g, material(g, k));
      if (o) { run.bodies[g.body].add(o); shapeObjects.push({ object: o, geom: g, run }); }
    });
  }
}

// ---- contacts: pooled markers and arrows per run ----
const markerGeometry = new THREE.SphereGeometry(1, 12, 8);
const markerMaterial = new THREE.MeshBasicMaterial({ color: 0x111111 });
function contactPool(run) {
  run.contactGroup = new THREE.Group();
  scene.add(run.contactGroup);
  run.pool = [];
}
runs.forEach(contactPool);

let maxForce = 0;
for (const r of runs)
  for (let i = 0; i < r.contacts.length; i += 9) {
    const c = r.contacts;
    maxForce = Math.max(maxForce, Math.hypot(c[i + 3], c[i + 4], c[i + 5]),
      Math.hypot(c[i + 6], c[i + 7], c[i + 8]));
  }

let sceneSize = 1, arrowGain = 1;
const tmp = new THREE.Vector3();
function setArrow(a, p, f, scale) {
  const len = Math.hypot(f[0], f[1], f[2]) * scale;
  a.visible = len > 1e-6 * sceneSize;
  if (!a.visible) return;
  a.position.copy(p);
  a.setDirection(tmp.set(f[0], f[1], f[2]).normalize());
  const head = Math.min(0.3 * len, 0.04 * sceneSize);
  a.setLength(len, head, 0.5 * head);
}

function showContacts(run, f) {
  const from = f >= 0 ? run.contact_off[f] : 0, to = f >= 0 ? run.contact_off[f + 1] : 0;
  const n = layers.contacts && !run.hidden ? to - from : 0;
  const scale = maxForce > 0 ? 0.25 * sceneSize * arrowGain / maxForce : 0;
  while (run.pool.length < n) {
    const item = {
      marker: new THREE.Mesh(markerGeometry, markerMaterial),
      normal: new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, 0x1a9e3a),
      friction: new THREE.ArrowHelper(new THREE.Vector3(1, 0, 0), new THREE.Vector3(), 1, 0xff7f0e),
    };
    run.contactGroup.add(item.marker, item.normal, item.friction);
    run.pool.push(item);
  }
  const c = run.contacts, p = new THREE.Vector3();
  run.pool.forEach((item, j) => {
    const on = j < n;
    item.marker.visible = on;
    if (!on) { item.normal.visible = item.friction.visible = false; return; }
    const i = 9 * (from + j);
    p.set(c[i], c[i + 1], c[i + 2]);
    item.marker.position.copy(p);
    item.marker.scale.setScalar(0.008 * sceneSize);
    setArrow(item.normal, p, [c[i + 3], c[i + 4], c[i + 5]], scale);
    setArrow(item.friction, p, [c[i + 6], c[i + 7], c[i + 8]], scale);
  });
  return n;
}

// ---- posing ----
function pose(run, f) {
  if (f < 0) return;
  const P = run.poses, base = f * (nb - 1) * 7;
  for (let b = 1; b < nb; ++b) {
    const o = base + (b - 1) * 7, g = run.bodies[b];
    g.position.set(P[o], P[o + 1], P[o + 2]);
    g.quaternion.set(P[o + 3], P[o + 4], P[o + 5], P[o + 6]);
  }
}

function applyVisibility() {
  staticGroup.visible = layers.static;
  for (const s of shapeObjects) {
    const layer = s.geom.visual ? layers.visual : layers.collision;
    const body = data.bodies[s.geom.body];
    s.object.visible = (s.geom.body === 0 || layer) && !isHidden(body);
  }
  for (const r of runs) r.group.visible = !r.hidden;
}

// ---- time ----
let t = 0, playing = false, speed = 1, ncontactsShown = 0;
const slider = document.getElementById('slider');
const timeLabel = document.getElementById('time');
let plots = null;

function draw() {
  ncontactsShown = 0;
  for (const r of runs) {
    const f = frameAt(r, t);
    pose(r, f);
    ncontactsShown += showContacts(r, f);
  }
  renderer.render(scene, camera);
  slider.value = String(Math.round(t / tmax * 1000));
  timeLabel.textContent = `t = ${t.toFixed(3)} s, ${ncontactsShown} contacts`;
  if (plots) plots.cursor(t);
}

function setTime(x) { t = Math.min(tmax, Math.max(0, x)); draw(); }

// ---- camera fit: the moving bodies' box at frame 0 (the static geometry when none) ----
function fitCamera() {
  const box = new THREE.Box3();
  for (const r of runs) { pose(r, 0); r.group.updateMatrixWorld(true); box.expandByObject(r.group); }
  if (box.isEmpty()) { staticGroup.updateMatrixWorld(true); box.expandByObject(staticGroup); }
  if (box.isEmpty()) box.set(new THREE.Vector3(-1, -1, -1), new THREE.Vector3(1, 1, 1));
  const center = box.getCenter(new THREE.Vector3());
  sceneSize = Math.max(0.2, box.getSize(new THREE.Vector3()).length());
    // at 1.58 D from the centre of the box (diagonal D), the box's bounding sphere (radius D/2)
  // spans ±17.6° < the ±20° of the vertical field of view: every body is in view
  camera.position.copy(center).add(new THREE.Vector3(0.75, -1.25, 0.6).multiplyScalar(sceneSize));
  camera.near = 0.005 * sceneSize; camera.far = 200 * sceneSize;
  camera.updateProjectionMatrix();
  controls.target.copy(center);
  controls.update();
  return center;
}

function resize() {
  const w = view.clientWidth, h = view.clientHeight;
  renderer.setSize(w, h);
  camera.aspect = w / Math.max(1, h);
  camera.updateProjectionMatrix();
  if (plots) plots.render();
  draw();
}

// ---- side panel ----
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

function buildSide() {
  const side = document.getElementById('side');
  heading(side, data.scene.split('/').pop());
  heading(side, 'runs');
  runs.forEach((r, k) => {
    const l = checkbox(side, `${r.name} (${r.status})`, !r.hidden, (on) => {
      r.hidden = !on; applyVisibility(); if (plots) plots.render(); draw();
    }, RUN_COLORS[k % RUN_COLORS.length]);
    l.className = 'run';
  });
  heading(side, 'show');
  for (const [key, text] of [['collision', 'collision geometry'], ['visual', 'visual meshes'],
    ['contacts', 'contacts and forces'], ['static', 'world geometry']])
    checkbox(side, text, layers[key], (on) => { layers[key] = on; applyVisibility(); draw(); });
  const gain = document.createElement('label');
  gain.textContent = 'force arrows ';
  const g = document.createElement('input');
  g.type = 'range'; g.min = '-2'; g.max = '2'; g.step = '0.1'; g.value = '0';
  g.addEventListener('input', () => { arrowGain = Math.pow(10, Number(g.value)); draw(); });
  gain.appendChild(g);
  side.appendChild(gain);
  heading(side, 'bodies');
  const withShapes = new Set(data.geoms.map((x) => x.body));
  data.bodies.forEach((name, b) => {
    if (b === 0 || !withShapes.has(b)) return;
    checkbox(side, name, !isHidden(name), (on) => {
      if (on) hidden.delete(name); else hidden.add(name);
      applyVisibility(); draw();
    });
  });
}

// ---- controls ----
const playButton = document.getElementById('play');
playButton.addEventListener('click', () => {
  playing = !playing;
  playButton.textContent = playing ? 'pause' : 'play';
  if (playing && t >= tmax) t = 0;
  last = performance.now();
});
document.getElementById('speed').addEventListener('change', (e) => { speed = Number(e.target.value); });
slider.addEventListener('input', () => { playing = false; playButton.textContent = 'play'; setTime(Number(slider.value) / 1000 * tmax); });
controls.addEventListener('change', () => renderer.render(scene, camera));

let last = performance.now();
function tick(now) {
  if (playing) {
    t += (now - last) / 1000 * speed;
    if (t >= tmax) { t = tmax; playing = false; playButton.textContent = 'play'; }
    draw();
  }
  last = now;
  requestAnimationFrame(tick);
}

// ---- start ----
addShapes();
fitCamera();
// the ground grids extend to twice the scene's size around its centre
for (const s of shapeObjects)
  if (s.geom.type === 'halfspace') s.object.scale.set(Math.max(2, 2 * sceneSize), Math.max(2, 2 * sceneSize), 1);
applyVisibility();
buildSide();
plots = makePlots(document.getElementById('plots'), runs, RUN_COLORS, tmax, (x) => { playing = false; setTime(x); });
window.addEventListener('resize', resize);
const frame = params.get('frame');
if (frame !== null && runs.length && runs[0].frame_t.length)
  t = runs[0].frame_t[Math.min(runs[0].frame_t.length - 1, Math.max(0, Number(frame) | 0))];
else if (params.get('t') !== null) t = Math.min(tmax, Math.max(0, Number(params.get('t'))));
const tBuilt = performance.now();
resize();
const tDrawn = performance.now();
// load_ms counts from navigation start (the page's parsing included); decode_ms is the replay's
// decoding, build_ms the WebGL context and scene objects, draw_ms the first frame (shader
// compilation, plots)
const now = performance.now();
console.log(`moreau-viewer: ready frame=${runs.length ? frameAt(runs[0], t) : -1} t=${t.toFixed(4)} ` +
  `contacts=${ncontactsShown} size=${sceneSize.toFixed(5)} ` +
  `view=${view.clientWidth}x${view.clientHeight} load_ms=${Math.round(now)} ` +
  `decode_ms=${Math.round(tDecoded - tStart)} build_ms=${Math.round(tBuilt - tDecoded)} ` +
  `draw_ms=${Math.round(tDrawn - tBuilt)}`);
requestAnimationFrame(tick);
