// Drives a live viewer page in headless Chromium (Debian's /usr/bin/chromium through
// playwright-core) for the tests of live sessions (tests/test_viewer_live.c,
// python/tests/test_viewer.py) and prints what it saw as one JSON line on stdout.
//
//   node viewer/test/live.mjs URL SCENARIO [ARG] [OUT.png]
//
// session PREFIX: frames advance (2 s apart), the pause button pauses and the pause holds
//   (2 s), three single steps advance the steps by three, the bodies named PREFIX... are in
//   the view (their projected box), a screenshot of the 3D view goes to OUT.png.
// perturb BODY: Ctrl + drag from BODY's origin 120 px to the right, held 1.5 s, released.
// shot T: pause once the simulated time passes T s, then a screenshot of the page to OUT.png.
//
// The page's state is read from its DOM and window.moreauViewer (docs/viewer.md).
import { chromium } from 'playwright-core';

const [url, scenario, arg, out] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.MOREAU_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--no-first-run'],
});
const result = { scenario, errors: [] };
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (e) => result.errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') result.errors.push(m.text()); });
  await page.goto(url);
  const snap = () => page.evaluate(() => ({
    frame: window.moreauViewer.frame, t: window.moreauViewer.t, steps: window.moreauViewer.steps,
    paused: document.body.dataset.paused, status: document.getElementById('status').textContent,
    time: document.getElementById('time').textContent, frameText: document.getElementById('frame').textContent,
  }));
  await page.waitForFunction(() => window.moreauViewer && window.moreauViewer.frame >= 2, null,
    { timeout: 180000 });
  if (scenario === 'session') {
    result.first = await snap();
    await page.waitForTimeout(2000);
    result.second = await snap();
    await page.click('#pause');
    await page.waitForFunction(() => document.body.dataset.paused === '1', null, { timeout: 60000 });
    await page.waitForTimeout(300); // a frame in flight before the pause reached the simulation
    result.paused1 = await snap();
    await page.waitForTimeout(2000);
    result.paused2 = await snap();
    for (let k = 1; k <= 3; ++k) {
      const before = (await snap()).steps;
      await page.click('#step');
      await page.waitForFunction((s) => window.moreauViewer.steps > s, before, { timeout: 60000 });
    }
    result.stepped = await snap();
    result.box = await page.evaluate((p) => window.moreauViewer.screenBox(p), arg);
    if (out) await page.locator('#view').screenshot({ path: out });
    await page.click('#pause'); // run again
    await page.waitForFunction(() => document.body.dataset.paused === '0', null, { timeout: 60000 });
    result.resumed = await snap();
  } else if (scenario === 'shot') {
    await page.waitForFunction((t) => window.moreauViewer.t >= t, Number(arg), { timeout: 180000 });
    await page.click('#pause');
    await page.waitForFunction(() => document.body.dataset.paused === '1', null, { timeout: 60000 });
    await page.waitForTimeout(1000);
    await page.screenshot({ path: out });
    result.after = await snap();
  } else if (scenario === 'perturb') {
    // the body's pixel position once the view has its size and its camera (a loaded machine
    // may lay the page out after the first frames); what the page had, when it never does
    const finite = (b) => {
      const q = window.moreauViewer.bodyScreen(b);
      return !!q && Number.isFinite(q.x) && Number.isFinite(q.y);
    };
    try {
      await page.waitForFunction(finite, arg, { timeout: 60000 });
    } catch (e) {
      result.view = await page.evaluate((b) => ({ screen: window.moreauViewer.bodyScreen(b),
        width: document.getElementById('view').clientWidth, height: document.getElementById('view').clientHeight,
        notice: document.getElementById('notice')?.textContent }), arg);
      throw e;
    }
    const rect = await page.locator('#view').boundingBox();
    const p = await page.evaluate((b) => window.moreauViewer.bodyScreen(b), arg);
    result.start = { x: rect.x + p.x, y: rect.y + p.y };
    await page.keyboard.down('Control');
    await page.mouse.move(result.start.x, result.start.y);
    await page.mouse.down();
    await page.mouse.move(result.start.x + 120, result.start.y, { steps: 6 });
    await page.waitForTimeout(1500);
    await page.mouse.up();
    await page.keyboard.up('Control');
    await page.waitForTimeout(500);
    result.after = await snap();
  }
} catch (e) {
  result.errors.push(String(e));
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
