// The 3D view shared by replays and live pages: the bodies of every run (collision geometry and
// URDF visual elements, with the fallback rule below), the world geometry, contact points with
// their force arrows and the arrows' legend, lights with shadows, and the camera: fitted to the
// moving bodies, following a chosen body (default: the page's "follow", the first robot's base),
// free orbit, preset and saved viewpoints.
//
// Never an invisible robot: when a page has visual elements, a body shows its collision
// geometry as well whenever one of its visual elements could not be loaded (the page's
// "missing" list) or it has no visual element at all (a free scene body beside a robot).
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { shapeObject } from './shapes.js';

THREE.Object3D.DEFAULT_UP.set(0, 0, 1);

export const RUN_COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf',
  '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22'];
const BODY_COLORS = [0x4e79a7, 0xf28e2b, 0x59a14f, 0xb07aa1, 0xedc948, 0x76b7b2, 0xff9da7,
  0x9c755f, 0xe15759, 0xbab0ac];

// camera directions (from the target towards the camera) of the preset viewpoints
const PRESETS = {
  fitted: [0.75, -1.25, 0.6], front: [1, 0, 0.25], side: [0, -1, 0.25], back: [-1, 0, 0.25],
  top: [0.0001, 0, 1],
};

export class View {
  // data: the decoded page data; runs: [{name, hidden}], params: URLSearchParams of the hash
  constructor(data, runs, params, element) {
    Object.assign(this, { data, runs, params, element });
    this.nb = data.bodies.length;
    this.hidden = new Set((params.get('hide') || '').split(',').filter((s) => s));
    for (const r of runs) r.hidden = this.isHidden(r.name);
    // a page "has visuals" when its robots declare any, drawn or not
    const hasVisual = data.geoms.some((g) => g.visual) || (data.missing || []).length > 0;
    this.fallback = this.fallbackBodies(hasVisual);
    this.layers = { collision: !hasVisual, visual: hasVisual, contacts: params.get('contacts') !== '0',
      static: params.get('static') !== '0', shadows: params.get('shadows') !== '0' };
    this.arrows = { mode: params.get('forces') || 'frame', gain: 1, runMax: 0 };
    this.sceneSize = 1;
    this.setupRenderer();
    this.build();
  }

  isHidden(name) { return this.hidden.has(name) || this.hidden.has(name.split('/')[0]); }

  // bodies drawn with their collision geometry although the visual layer is on
  fallbackBodies(hasVisual) {
    const f = new Set();
    if (!hasVisual) return f;
    for (const m of this.data.missing || []) f.add(m.body);
    const withVisual = new Set(this.data.geoms.filter((g) => g.visual).map((g) => g.body));
    for (const g of this.data.geoms) if (!g.visual && g.body > 0 && !withVisual.has(g.body)) f.add(g.body);
    return f;
  }

  // ---- renderer, camera, lights ----
  setupRenderer() {
    const r = this.renderer = View.webgl() || View.noRenderer();
    r.setPixelRatio(window.devicePixelRatio || 1);
    r.shadowMap.enabled = this.layers.shadows;
    r.shadowMap.type = THREE.PCFShadowMap;
    this.element.appendChild(r.domElement);
    const s = this.scene = new THREE.Scene();
    s.background = new THREE.Color(0xffffff);
    s.add(new THREE.HemisphereLight(0xffffff, 0x667788, 1.8));
    const sun = this.sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.castShadow = true;
    sun.shadow.mapSize.set(1024, 1024);
    s.add(sun, sun.target);
    this.camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
    this.controls = new OrbitControls(this.camera, r.domElement);
    this.controls.addEventListener('change', () => { if (!this.drawing) this.render(); });
  }

  // a WebGL renderer, or null where the browser has no WebGL (the page then runs without its
  // 3D view: frames, time, controls, plots and the camera's projections still work)
  static webgl() {
    try {
      return new THREE.WebGLRenderer({ antialias: true });
    } catch (e) {
      const n = document.getElementById('notice');
      if (n) n.textContent = 'This browser could not create a WebGL context: the 3D view is not drawn. ' +
        '(Headless Chromium needs --use-angle=swiftshader --enable-unsafe-swiftshader.)';
      return null;
    }
  }

  static noRenderer() {
    const canvas = document.createElement('canvas');
    return { domElement: canvas, shadowMap: {}, setPixelRatio() {}, render() {},
      setSize(w, h) { canvas.width = w; canvas.height = h; } };
  }

  material(g, runIndex) {
    let color = BODY_COLORS[g.body % BODY_COLORS.length];
    if (g.visual) color = g.rgba ? new THREE.Color(g.rgba[0], g.rgba[1], g.rgba[2]) : 0xb8bcc4;
    const multi = this.runs.length > 1 && g.body > 0;
    if (multi) color = RUN_COLORS[runIndex % RUN_COLORS.length];
    return new THREE.MeshLambertMaterial({ color, transparent: multi, opacity: multi ? 0.7 : 1 });
  }

  // the static geometry (body 0) once; the moving bodies once per run
  build() {
    this.staticGroup = new THREE.Group();
    this.scene.add(this.staticGroup);
    this.shapes = []; // {object, geom, run}
    for (const run of this.runs) {
      run.group = new THREE.Group();
      run.bodies = [];
      for (let b = 0; b < this.nb; ++b) {
        const g = new THREE.Group();
        g.userData.body = b;
        run.bodies.push(g);
        if (b > 0) run.group.add(g);
      }
      run.contactGroup = new THREE.Group();
      run.pool = [];
      this.scene.add(run.group, run.contactGroup);
    }
    for (const g of this.data.geoms) {
      if (g.body === 0) {
        const o = shapeObject(g, this.material(g, 0), this.data.meshes);
        if (o) { this.staticGroup.add(o); this.shapes.push({ object: o, geom: g }); }
        continue;
      }
      this.runs.forEach((run, k) => {
        const o = shapeObject(g, this.material(g, k), this.data.meshes);
        if (o) { run.bodies[g.body].add(o); this.shapes.push({ object: o, geom: g, run }); }
      });
    }
    this.markerGeometry = new THREE.SphereGeometry(1, 12, 8);
    this.markerMaterial = new THREE.MeshBasicMaterial({ color: 0x111111 });
  }

  applyVisibility() {
    const L = this.layers;
    this.staticGroup.visible = L.static;
    for (const s of this.shapes) {
      const b = s.geom.body, name = this.data.bodies[b];
      if (b === 0) { s.object.visible = !s.geom.visual || L.visual; continue; }
      const on = s.geom.visual ? L.visual : L.collision || (L.visual && this.fallback.has(b));
      s.object.visible = on && !this.isHidden(name);
    }
    for (const r of this.runs) r.group.visible = r.contactGroup.visible = !r.hidden;
    this.renderer.shadowMap.enabled = L.shadows;
    this.sun.castShadow = L.shadows;
    this.scene.traverse((o) => { if (o.material) o.material.needsUpdate = true; });
  }

  // ---- posing: 7 floats per body 1..n-1 (position, quaternion x y z w) from offset ----
  pose(run, P, offset) {
    for (let b = 1; b < this.nb; ++b) {
      const o = offset + (b - 1) * 7, g = run.bodies[b];
      g.position.set(P[o], P[o + 1], P[o + 2]);
      g.quaternion.set(P[o + 3], P[o + 4], P[o + 5], P[o + 6]);
    }
  }

  // ---- contacts: 9 floats each (point, normal force, friction force) ----
  static largestForce(c, from, to) {
    let m = 0;
    for (let i = 9 * from; i < 9 * to; i += 9)
      m = Math.max(m, Math.hypot(c[i + 3], c[i + 4], c[i + 5]), Math.hypot(c[i + 6], c[i + 7], c[i + 8]));
    return m;
  }

  // the arrow length of a force of magnitude f (m), and the legend's text
  arrowScale(frameMax) {
    const L = 0.25 * this.sceneSize * this.arrows.gain, mode = this.arrows.mode;
    const ref = mode === 'frame' ? frameMax : Math.max(this.arrows.runMax, frameMax);
    if (!(ref > 0)) return { len: () => 0, legend: '' };
    const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toPrecision(2));
    if (mode === 'log') {
      const d = Math.log10(1 + ref);
      return { len: (f) => L * Math.log10(1 + f) / d,
        legend: `forces, log scale: ${fmt(L)} m = ${fmt(ref)} N, length ∝ log₁₀(1 + f / 1 N)` };
    }
    const what = mode === 'frame' ? 'largest force of this frame' : 'largest force so far';
    return { len: (f) => L * f / ref, legend: `forces: ${fmt(L)} m = ${fmt(ref)} N (${what})` };
  }

  setArrow(a, p, f, scale) {
    const mag = Math.hypot(f[0], f[1], f[2]), len = scale.len(mag);
    a.visible = len > 1e-6 * this.sceneSize;
    if (!a.visible) return;
    a.position.copy(p);
    a.setDirection(new THREE.Vector3(f[0] / mag, f[1] / mag, f[2] / mag));
    const head = Math.min(0.3 * len, 0.04 * this.sceneSize);
    a.setLength(len, head, 0.5 * head);
  }

  // show contacts [from, to) of c for run, arrows scaled by scale; returns the count shown
  showContacts(run, c, from, to, scale) {
    const n = this.layers.contacts && !run.hidden ? to - from : 0;
    while (run.pool.length < n) {
      const item = {
        marker: new THREE.Mesh(this.markerGeometry, this.markerMaterial),
        normal: new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, 0x1a9e3a),
        friction: new THREE.ArrowHelper(new THREE.Vector3(1, 0, 0), new THREE.Vector3(), 1, 0xff7f0e),
      };
      run.contactGroup.add(item.marker, item.normal, item.friction);
      run.pool.push(item);
    }
    const p = new THREE.Vector3();
    run.pool.forEach((item, j) => {
      const on = j < n;
      item.marker.visible = on;
      if (!on) { item.normal.visible = item.friction.visible = false; return; }
      const i = 9 * (from + j);
      p.set(c[i], c[i + 1], c[i + 2]);
      item.marker.position.copy(p);
      item.marker.scale.setScalar(0.01 * this.sceneSize);
      this.setArrow(item.normal, p, [c[i + 3], c[i + 4], c[i + 5]], scale);
      this.setArrow(item.friction, p, [c[i + 6], c[i + 7], c[i + 8]], scale);
    });
    return n;
  }

  // one frame: every run's pose and contacts ({run, poses, poseOffset, contacts, from, to});
  // returns the number of contacts shown
  drawFrame(items) {
    let frameMax = 0, shown = 0;
    for (const it of items) {
      this.pose(it.run, it.poses, it.poseOffset);
      if (!it.run.hidden) frameMax = Math.max(frameMax, View.largestForce(it.contacts, it.from, it.to));
    }
    this.arrows.runMax = Math.max(this.arrows.runMax, frameMax);
    const scale = this.arrowScale(frameMax);
    for (const it of items) shown += this.showContacts(it.run, it.contacts, it.from, it.to, scale);
    const legend = document.getElementById('legend');
    if (legend) legend.textContent = this.layers.contacts && shown ? scale.legend : '';
    this.updateFollow();
    this.render();
    return shown;
  }

  render() {
    this.drawing = true;
    this.controls.update();
    this.drawing = false;
    this.updateSun();
    this.renderer.render(this.scene, this.camera);
  }

  // ---- camera ----
  // the world position of body b in the first visible run
  bodyPosition(b) {
    const run = this.runs.find((r) => !r.hidden) || this.runs[0];
    if (!run || b <= 0 || b >= this.nb) return null;
    run.group.updateMatrixWorld(true);
    return new THREE.Vector3().setFromMatrixPosition(run.bodies[b].matrixWorld);
  }

  // fit the camera to the moving bodies' box as posed now (the static geometry when none)
  fit() {
    const box = new THREE.Box3();
    for (const r of this.runs) { r.group.updateMatrixWorld(true); box.expandByObject(r.group); }
    if (box.isEmpty()) { this.staticGroup.updateMatrixWorld(true); box.expandByObject(this.staticGroup); }
    if (box.isEmpty()) box.set(new THREE.Vector3(-1, -1, -1), new THREE.Vector3(1, 1, 1));
    const center = box.getCenter(new THREE.Vector3());
    this.sceneSize = Math.max(0.2, box.getSize(new THREE.Vector3()).length());
    // at 1.58 D from the centre of the box (diagonal D), the box's bounding sphere (radius D/2)
    // spans ±17.6° < the ±20° of the vertical field of view: every body is in view
    this.camera.position.copy(center).add(new THREE.Vector3(...PRESETS.fitted).multiplyScalar(this.sceneSize));
    this.camera.near = 0.005 * this.sceneSize; this.camera.far = 200 * this.sceneSize;
    this.camera.updateProjectionMatrix();
    this.controls.target.copy(center);
    this.controls.update();
    const s = Math.max(2, 2 * this.sceneSize);
    for (const sh of this.shapes) if (sh.geom.type === 'halfspace') sh.object.scale.set(s, s, 1);
    this.fitted = { offset: this.camera.position.clone().sub(center), target: center.clone() };
    this.followLast = null;
    return center;
  }

  // follow body b (-1: free camera); the camera keeps its offset from the followed body
  setFollow(b) {
    this.follow = b > 0 && b < this.nb ? b : -1;
    this.followLast = null;
    this.updateFollow();
  }

  // (held while a body is dragged: the pointer's target stays put in the world)
  updateFollow() {
    const p = this.follow > 0 && !this.followHold ? this.bodyPosition(this.follow) : null;
    if (p) {
      if (this.followLast) {
        const d = p.clone().sub(this.followLast);
        this.camera.position.add(d);
        this.controls.target.add(d);
      }
      this.followLast = p;
    }
    this.recentreGround();
  }

  // the ground grid stays under the camera's target, moved by whole grid cells
  recentreGround() {
    for (const sh of this.shapes) {
      if (sh.geom.type !== 'halfspace') continue;
      const o = sh.object, local = o.worldToLocal(this.controls.target.clone());
      const cell = 2 / 40;
      for (const c of o.children) {
        c.position.x = Math.round(local.x / cell) * cell;
        c.position.y = Math.round(local.y / cell) * cell;
      }
    }
  }

  // the sun's shadow box follows the camera's target
  updateSun() {
    const t = this.controls.target, s = this.sceneSize;
    this.sun.target.position.copy(t);
    this.sun.position.copy(t).add(new THREE.Vector3(0.45, -0.3, 0.84).multiplyScalar(3 * s));
    const c = this.sun.shadow.camera, h = 1.5 * s;
    if (c.right !== h) {
      c.left = -h; c.right = h; c.top = h; c.bottom = -h; c.near = 0.01 * s; c.far = 8 * s;
      c.updateProjectionMatrix();
    }
  }

  // a viewpoint: a preset name, or a saved {offset, target}
  setView(v) {
    const dist = this.camera.position.distanceTo(this.controls.target);
    if (typeof v === 'string') {
      const dir = new THREE.Vector3(...PRESETS[v]).normalize();
      this.camera.position.copy(this.controls.target).add(dir.multiplyScalar(dist));
      if (v === 'fitted' && this.fitted) this.camera.position.copy(this.controls.target).add(this.fitted.offset);
    } else {
      if (this.follow <= 0 && v.target) this.controls.target.fromArray(v.target);
      this.camera.position.copy(this.controls.target).add(new THREE.Vector3().fromArray(v.offset));
    }
    this.render();
  }

  currentView() {
    return { offset: this.camera.position.clone().sub(this.controls.target).toArray(),
      target: this.controls.target.toArray() };
  }

  resize() {
    const w = this.element.clientWidth, h = this.element.clientHeight;
    this.renderer.setSize(w, h);
    this.camera.aspect = w / Math.max(1, h);
    this.camera.updateProjectionMatrix();
  }

  // ---- screen positions (for tests and scripts) ----
  // pixel box, in the view's CSS pixels, of the bodies whose names start with prefix (a robot:
  // "solo/"), over the corners of their world boxes; null when none is drawn
  screenBox(prefix) {
    const run = this.runs.find((r) => !r.hidden) || this.runs[0];
    const box = new THREE.Box3();
    run.group.updateMatrixWorld(true);
    for (let b = 1; b < this.nb; ++b)
      if (this.data.bodies[b].startsWith(prefix)) box.expandByObject(run.bodies[b]);
    if (box.isEmpty()) return null;
    const w = this.element.clientWidth, h = this.element.clientHeight;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let k = 0; k < 8; ++k) {
      const p = new THREE.Vector3(k & 1 ? box.max.x : box.min.x, k & 2 ? box.max.y : box.min.y,
        k & 4 ? box.max.z : box.min.z).project(this.camera);
      const x = (p.x + 1) / 2 * w, y = (1 - p.y) / 2 * h;
      x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
    }
    return { x0, y0, x1, y1, width: w, height: h };
  }

  // the pixel position of body b's origin in the view
  bodyScreen(b) {
    const p = this.bodyPosition(b);
    if (!p) return null;
    p.project(this.camera);
    return { x: (p.x + 1) / 2 * this.element.clientWidth, y: (1 - p.y) / 2 * this.element.clientHeight };
  }

  // ---- picking: the body under a pointer position (CSS pixels in the view), with the point ----
  pick(x, y) {
    const ndc = new THREE.Vector2(x / this.element.clientWidth * 2 - 1, 1 - y / this.element.clientHeight * 2);
    const ray = new THREE.Raycaster();
    ray.setFromCamera(ndc, this.camera);
    const run = this.runs[0];
    const hits = ray.intersectObject(run.group, true).filter((h) => h.object.visible && h.object.isMesh);
    for (const h of hits) {
      let o = h.object;
      while (o && o.userData.body === undefined) o = o.parent;
      if (o && o.userData.body > 0) return { body: o.userData.body, point: h.point, object: o };
    }
    return null;
  }
}
