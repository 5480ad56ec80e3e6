// moreau's viewer page: a replay (the runs recorded in the page) or a live session (frames
// streamed by a running simulation); docs/viewer.md.
//
// URL hash parameters (for links and tests), both modes: ui=0 (the 3D view only),
// hide=NAME,NAME (bodies, robots or runs by name), static=0 (no world geometry), contacts=0,
// shadows=0, forces=frame|run|log (arrow scaling), follow=BODY|none (the body the camera
// follows; default: the first robot's base, else the first free body), view=front|side|back|top.
// Replays: frame=N (a frame of the first run) or t=SECONDS. Live pages: window=SECONDS (the
// plots' time span, default 10).
import { decode } from './data.js';
import { View } from './view.js';
import { buildSide, showNotice } from './side.js';
import { startReplay } from './replay.js';
import { startLive } from './live.js';

// the body to follow: the hash's follow=NAME or none, else the page's default
function followBody(data, params) {
  const f = params.get('follow');
  if (f === 'none') return -1;
  if (f !== null) return data.bodies.indexOf(f);
  return data.follow ?? -1;
}

function main() {
  const times = { start: performance.now() };
  const params = new URLSearchParams(location.hash.slice(1));
  const data = decode(document.getElementById('moreau-replay').textContent);
  times.decoded = performance.now();
  const live = !!data.live;
  document.body.classList.toggle('live', live);
  document.body.dataset.mode = live ? 'live' : 'replay';
  if (params.get('ui') === '0') document.body.classList.add('noui');
  if (!live) document.querySelector('#speed option[value="0"]')?.remove();
  const runs = live ? [{ name: 'live', status: 'live' }] : data.runs;
  const view = new View(data, runs, params, document.getElementById('view'));
  view.applyVisibility();
  const follow = followBody(data, params);
  view.follow = follow;
  // the side panel first: the view's size depends on the page's layout
  let redraw = () => view.render();
  buildSide(view, data, runs, () => window.dispatchEvent(new Event('resize')), () => redraw());
  if (params.get('ui') !== '0') showNotice(data);
  redraw = live ? startLive(view, data, params, follow)
    : startReplay(view, data, params, times, follow);
  // a change of the view's size (the window, the panels) redraws at the new size
  new ResizeObserver(() => window.dispatchEvent(new Event('resize'))).observe(view.element);
}

main();
