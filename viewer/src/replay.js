// A replay: the recorded runs posed at time t, a time slider with play/pause/speed, plots over
// the whole run with a cursor. URL hash parameters: frame=N (a frame of the first run) or
// t=SECONDS, plus the view's (main.js). Once the requested frame is drawn the page logs
// "moreau-viewer: ready frame=N t=T ..." on the console.
import { frameAt } from './data.js';
import { makePlots } from './plots.js';
import { RUN_COLORS } from './view.js';

export function startReplay(view, data, params, times, follow) {
  const runs = view.runs;
  // the camera is fitted to frame 0, then follows its body
  for (const r of runs) if (r.frame_t.length) view.pose(r, r.poses, 0);
  view.fit();
  view.setFollow(follow);
  if (params.get('view')) view.setView(params.get('view'));
  // the last frame's or step's time
  const tmax = Math.max(1e-9, ...runs.map((r) => Math.max(r.frame_t.length ? r.frame_t[r.frame_t.length - 1] : 0,
    r.nstats ? r.stats.t[r.nstats - 1] : 0)));
  let t = 0, playing = false, speed = 1, shown = 0, last = performance.now();
  const slider = document.getElementById('slider');
  const timeLabel = document.getElementById('time');
  const frameLabel = document.getElementById('frame');
  const playButton = document.getElementById('play');
  let plots = null;

  function draw() {
    const items = [];
    for (const r of runs) {
      const f = frameAt(r, t);
      if (f < 0) continue;
      items.push({ run: r, poses: r.poses, poseOffset: f * (view.nb - 1) * 7, contacts: r.contacts,
        from: r.contact_off[f], to: r.contact_off[f + 1] });
    }
    shown = view.drawFrame(items);
    const f0 = runs.length ? frameAt(runs[0], t) : -1;
    slider.value = String(Math.round(t / tmax * 1000));
    timeLabel.textContent = `t = ${t.toFixed(3)} s, ${shown} contacts`;
    frameLabel.textContent = `frame ${f0}`;
    document.body.dataset.frame = String(f0);
    document.body.dataset.time = t.toFixed(6);
    if (plots) plots.cursor(t);
  }
  const setTime = (x) => { t = Math.min(tmax, Math.max(0, x)); draw(); };
  const stop = () => { playing = false; playButton.textContent = 'play'; };

  playButton.addEventListener('click', () => {
    playing = !playing;
    playButton.textContent = playing ? 'pause' : 'play';
    if (playing && t >= tmax) t = 0;
    last = performance.now();
  });
  document.getElementById('speed').addEventListener('change', (e) => { speed = Number(e.target.value); });
  slider.addEventListener('input', () => { stop(); setTime(Number(slider.value) / 1000 * tmax); });
  function tick(now) {
    if (playing) {
      t += (now - last) / 1000 * speed;
      if (t >= tmax) { t = tmax; stop(); }
      draw();
    }
    last = now;
    requestAnimationFrame(tick);
  }

  plots = makePlots(document.getElementById('plots'), runs, RUN_COLORS, (x) => { stop(); setTime(x); });
  const resize = () => { view.resize(); plots.render(0, tmax); draw(); };
  window.addEventListener('resize', resize);
  const frame = params.get('frame');
  if (frame !== null && runs.length && runs[0].frame_t.length)
    t = runs[0].frame_t[Math.min(runs[0].frame_t.length - 1, Math.max(0, Number(frame) | 0))];
  else if (params.get('t') !== null) t = Math.min(tmax, Math.max(0, Number(params.get('t'))));
  // the camera follows its body from the fitted view at t = 0 to the requested time
  const t1 = t;
  t = 0; draw(); t = t1;
  const tBuilt = performance.now();
  resize();
  const tDrawn = performance.now();
  // load_ms counts from navigation start (the page's parsing included); decode_ms is the data's
  // decoding, build_ms the WebGL context and scene objects, draw_ms the first frame (shader
  // compilation, plots)
  // the followed robot's (or, camera free, the default one's) projected box inside the view
  const robot = view.follow > 0 ? view.follow : data.follow ?? -1;
  const box = robot > 0 ? view.screenBox(data.bodies[robot].split('/')[0] + '/') : null;
  const inview = box ? (box.x0 >= 0 && box.y0 >= 0 && box.x1 <= box.width && box.y1 <= box.height ? 1 : 0) : -1;
  console.log(`moreau-viewer: ready frame=${runs.length ? frameAt(runs[0], t) : -1} t=${t.toFixed(4)} ` +
    `contacts=${shown} size=${view.sceneSize.toFixed(5)} ` +
    `view=${view.element.clientWidth}x${view.element.clientHeight} follow=${view.follow} ` +
    `inview=${inview} missing=${(data.missing || []).length} fallback=${view.fallback.size} ` +
    `load_ms=${Math.round(performance.now())} decode_ms=${Math.round(times.decoded - times.start)} ` +
    `build_ms=${Math.round(tBuilt - times.decoded)} draw_ms=${Math.round(tDrawn - tBuilt)}`);
  requestAnimationFrame(tick);
  return draw;
}
