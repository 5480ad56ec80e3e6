// A live page: the simulation's frames arrive over a WebSocket (ws://HOST/live, protocol
// "moreau-live"; docs/viewer.md, "Live viewing"); the controls send commands back: pause, run,
// step, reset, speed (a multiple of real time, or 0: as fast as possible), and a body
// perturbation: Ctrl + drag on a body pulls it with a spring towards the pointer, applied by
// the simulation as a wrench on that body in the next steps.
//
// Observable state, for people and scripts: #status (connecting, waiting, running, paused,
// ended, disconnected), #frame ("frame N": frames drawn), #time ("t = T s, C contacts"), and
// the attributes data-status, data-paused ("1" or "0"), data-frame, data-time and data-steps of
// <body>; window.moreauViewer holds the same values and helpers.
import * as THREE from 'three';
import { makePlots } from './plots.js';
import { RUN_COLORS } from './view.js';

const HEADER = 16; // Float64 header values of a frame message
const KEYS = ['t', 'energy', 'penetration', 'eps_abs', 'iterations', 'contacts'];
const FLAG_PAUSED = 1, FLAG_REALTIME = 2, FLAG_ENDED = 4, FLAG_WAITING = 8;

// one frame message: header, poses, contacts, the perturbation, step figures
function parse(buf) {
  const h = new Float64Array(buf, 0, HEADER);
  const nposes = h[8], nc = h[9], ns = h[10], pert = h[13];
  let off = HEADER * 8;
  const take = (n) => { const a = new Float32Array(buf, off, n); off += 4 * n; return a; };
  return { seq: h[1], steps: h[2], t: h[3], wall: h[4], flags: h[5], speed: h[6], generation: h[7],
    ncontacts: nc, firstRow: h[11], viewers: h[12], perturbBody: pert, rtf: h[14],
    poses: take(7 * nposes), contacts: take(9 * nc), perturb: pert >= 0 ? take(6) : null, stats: take(6 * ns) };
}

// the step figures of the session: growing typed arrays, the oldest half dropped past a cap
class Series {
  constructor(run) { this.run = run; this.cap = 4096; this.alloc(this.cap); run.nstats = 0; }
  alloc(cap) {
    const old = this.run.stats;
    this.run.stats = {};
    for (const k of KEYS) {
      const a = new Float32Array(cap);
      if (old && old[k]) a.set(old[k].subarray(0, this.run.nstats));
      this.run.stats[k] = a;
    }
    this.cap = cap;
  }
  clear() { this.run.nstats = 0; }
  push(rows) {
    const n = rows.length / 6, r = this.run;
    if (r.nstats + n > this.cap) {
      if (this.cap >= (1 << 20)) { // keep the newest half
        const keep = this.cap >> 1;
        for (const k of KEYS) r.stats[k].copyWithin(0, r.nstats - keep, r.nstats);
        r.nstats = keep;
      }
      while (r.nstats + n > this.cap) this.alloc(2 * this.cap);
    }
    for (let i = 0; i < n; ++i)
      KEYS.forEach((k, j) => { r.stats[k][r.nstats + i] = rows[6 * i + j]; });
    r.nstats += n;
  }
}

export function startLive(view, data, params, follow) {
  const run = view.runs[0];
  const series = new Series(run);
  const windowS = Number(params.get('window')) > 0 ? Number(params.get('window')) : 10;
  const el = (id) => document.getElementById(id);
  const state = { mode: 'live', status: 'connecting', frame: 0, seq: -1, t: 0, steps: 0, paused: false,
    ended: false, connected: false, viewers: 0, speed: 1, realtime: true, rtf: 0, contacts: 0,
    latency: [] };
  let latest = null, drawn = null, generation = -1, fitted = false, plotsAt = 0, plotsDirty = false;
  const plots = makePlots(el('plots'), view.runs, RUN_COLORS, null);

  function setStatus(s) {
    state.status = s;
    el('status').textContent = s;
    document.body.dataset.status = s;
  }
  document.body.dataset.paused = '0';

  // ---- the socket ----
  const ws = new WebSocket(`ws://${location.host}/live`, 'moreau-live');
  ws.binaryType = 'arraybuffer';
  const send = (cmd) => { if (ws.readyState === WebSocket.OPEN) ws.send(cmd); };
  ws.onopen = () => { state.connected = true; setStatus('running'); };
  ws.onclose = () => {
    state.connected = false;
    setStatus(state.ended ? 'ended' : 'disconnected');
    el('notice').textContent = state.ended ? '' : 'The simulation closed the connection: reload the page to reconnect.';
  };
  ws.onmessage = (e) => {
    if (typeof e.data === 'string') { // "status TEXT": the run ended
      if (e.data.startsWith('status ')) state.endStatus = e.data.slice(7);
      return;
    }
    const m = parse(e.data);
    if (m.generation !== generation) { series.clear(); view.arrows.runMax = 0; generation = m.generation; }
    series.push(m.stats);
    plotsDirty = true;
    latest = m;
  };

  // ---- drawing the newest frame at the display's rate ----
  function show(m) {
    view.pose(run, m.poses, 0);
    if (!fitted) {
      view.fit();
      view.setFollow(follow);
      if (params.get('view')) view.setView(params.get('view'));
      fitted = true;
    }
    drawSpring(m);
    state.contacts = view.drawFrame([{ run, poses: m.poses, poseOffset: 0, contacts: m.contacts,
      from: 0, to: m.ncontacts }]);
  }

  function draw(m) {
    show(m);
    if (state.frame === 0) send('ready'); // the first frame is drawn: the simulation may start
    state.frame += 1;
    Object.assign(state, { seq: m.seq, t: m.t, steps: m.steps, viewers: m.viewers, speed: m.speed, rtf: m.rtf,
      paused: !!(m.flags & FLAG_PAUSED), ended: !!(m.flags & FLAG_ENDED), realtime: !!(m.flags & FLAG_REALTIME) });
    setStatus(state.ended ? 'ended' : m.flags & FLAG_WAITING ? 'waiting' : state.paused ? 'paused' : 'running');
    if (state.ended && state.endStatus) el('status').title = `the run ended: ${state.endStatus}`;
    el('pause').textContent = state.paused ? 'run' : 'pause';
    el('time').textContent = `t = ${m.t.toFixed(3)} s, ${state.contacts} contacts` +
      (m.rtf > 0 ? `, ${m.rtf.toFixed(2)}× real time` : '');
    el('frame').textContent = `frame ${state.frame}`;
    Object.assign(document.body.dataset, { paused: state.paused ? '1' : '0', frame: String(state.frame),
      time: m.t.toFixed(6), steps: String(m.steps) });
    const speed = el('speed');
    if (document.activeElement !== speed) speed.value = state.realtime ? String(m.speed) : '0';
    // latency: from the simulation's publishing of the frame to its drawing here
    const lat = Date.now() - m.wall;
    if (state.latency.length < 100000) state.latency.push(lat);
    send(`lat ${m.seq} ${lat.toFixed(3)}`);
  }

  // frames at the display's rate; the plots at most 5 times a second, and once more when the
  // last rows came after the last drawing (a pause)
  function tick(now) {
    const fresh = latest && latest !== drawn;
    if (fresh) {
      drawn = latest;
      draw(latest);
    }
    if (plotsDirty && now - plotsAt > 200) {
      const t1 = Math.max(windowS, state.t);
      plots.render(t1 - windowS, t1);
      plotsAt = now;
      plotsDirty = false;
      plots.cursor(state.t);
    } else if (fresh) {
      plots.cursor(state.t);
    }
    requestAnimationFrame(tick);
  }

  // ---- controls ----
  el('pause').addEventListener('click', () => send(state.paused ? 'run' : 'pause'));
  el('step').addEventListener('click', () => send('step'));
  el('reset').addEventListener('click', () => send('reset'));
  el('speed').addEventListener('change', (e) => send(`speed ${Number(e.target.value)}`));
  window.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') return;
    if (e.key === ' ') { send(state.paused ? 'run' : 'pause'); e.preventDefault(); }
    else if (e.key === 's') send('step');
    else if (e.key === 'Backspace') { send('reset'); e.preventDefault(); }
  });

  // ---- perturbation: Ctrl + drag on a body ----
  const spring = new THREE.Line(new THREE.BufferGeometry().setFromPoints([new THREE.Vector3(), new THREE.Vector3()]),
    new THREE.LineBasicMaterial({ color: 0xd00000 }));
  spring.visible = false;
  view.scene.add(spring);
  function drawSpring(m) {
    spring.visible = !!m.perturb;
    if (!m.perturb) return;
    spring.geometry.attributes.position.array.set(m.perturb);
    spring.geometry.attributes.position.needsUpdate = true;
    spring.geometry.computeBoundingSphere();
  }
  let drag = null;
  const local = (e) => {
    const r = view.element.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  };
  function target(e) {
    const [x, y] = local(e);
    const ray = new THREE.Raycaster();
    ray.setFromCamera(new THREE.Vector2(x / view.element.clientWidth * 2 - 1, 1 - y / view.element.clientHeight * 2), view.camera);
    const p = new THREE.Vector3();
    return ray.ray.intersectPlane(drag.plane, p) ? p : null;
  }
  function perturb(p) {
    const a = drag.anchor;
    send(`perturb ${drag.body} ${a.x} ${a.y} ${a.z} ${p.x} ${p.y} ${p.z}`);
  }
  view.element.addEventListener('pointerdown', (e) => {
    if (!(e.ctrlKey || e.metaKey) || e.button !== 0) return;
    const [x, y] = local(e);
    const hit = view.pick(x, y);
    if (!hit) return;
    e.stopPropagation(); e.preventDefault();
    const n = view.camera.getWorldDirection(new THREE.Vector3());
    drag = { body: hit.body, anchor: hit.object.worldToLocal(hit.point.clone()),
      plane: new THREE.Plane().setFromNormalAndCoplanarPoint(n, hit.point) };
    view.element.setPointerCapture(e.pointerId);
    view.followHold = true;
    perturb(hit.point);
  }, true);
  view.element.addEventListener('pointermove', (e) => {
    if (!drag) return;
    e.stopPropagation();
    const p = target(e);
    if (p) perturb(p);
  }, true);
  const release = (e) => {
    if (!drag) return;
    e.stopPropagation();
    drag = null;
    view.followHold = false;
    view.followLast = null;
    send('release');
  };
  view.element.addEventListener('pointerup', release, true);
  view.element.addEventListener('pointercancel', release, true);

  window.addEventListener('resize', () => { view.resize(); view.render(); plotsAt = 0; plotsDirty = true; });
  view.resize();
  setStatus('connecting');
  window.moreauViewer = Object.assign(state, {
    send,
    screenBox: (prefix) => view.screenBox(prefix),
    bodyScreen: (name) => view.bodyScreen(data.bodies.indexOf(name)),
    body: (name) => data.bodies.indexOf(name),
    follow: () => view.follow,
  });
  requestAnimationFrame(tick);
  return () => { if (drawn) show(drawn); };
}
