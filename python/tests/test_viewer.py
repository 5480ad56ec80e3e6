"""The live viewer from Python (moreau.viewer, include/moreau/live.h) with a page in headless
Chromium, driven by viewer/test/live.mjs (playwright-core over Debian's chromium), which prints
what it saw as JSON. The loop here steps Solo-12 walking under MPC (b9) as a user's loop would:
viewer.sync() between steps.

Checked: the page's frames advance, the pause holds (the same simulated time and step count
2 s apart, and this loop's sync() does not return meanwhile), three single steps make three
steps, and the walking robot stays in the following camera's view.

Run by `make test` with MOREAU_LIB set, like test_moreau.py; it needs node and chromium (make
deps installs them)."""
import json
import os
import subprocess
import time
import unittest

import moreau
import moreau.viewer

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


class TestLiveViewer(unittest.TestCase):
    def test_session(self):
        world = moreau.World(os.path.join(ROOT, "scenes", "b9_solo_trot.yaml"))
        sim = moreau.Sim(world)
        with moreau.viewer.launch(sim, port=0, quiet=True) as viewer:
            self.assertTrue(viewer.url.startswith("http://127.0.0.1:"))
            # the browser and its driver without this interpreter's sanitizer runtime (make check)
            env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
            driver = subprocess.Popen(
                ["node", os.path.join(ROOT, "viewer", "test", "live.mjs"),
                 viewer.url + "#static=0&contacts=0&shadows=0", "session", "solo/"],
                stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
            end = time.monotonic() + 400
            longest_wait = 0.0
            while driver.poll() is None and time.monotonic() < end:
                t0 = time.monotonic()
                if viewer.sync(timeout=0.2):
                    sim.step()
                longest_wait = max(longest_wait, time.monotonic() - t0)
            if driver.poll() is None:
                driver.kill()
            out = driver.communicate()[0]
            stats = viewer.stats()
        result = json.loads(out.strip().splitlines()[-1])
        self.assertEqual(result["errors"], [])
        first, second = result["first"], result["second"]
        self.assertGreater(second["frame"], first["frame"])
        self.assertGreater(second["t"], first["t"])
        p1, p2 = result["paused1"], result["paused2"]
        self.assertEqual((p1["t"], p1["steps"]), (p2["t"], p2["steps"]))
        self.assertEqual(p2["status"], "paused")
        self.assertEqual(result["stepped"]["steps"], p2["steps"] + 3)
        box = result["box"]
        self.assertTrue(0 <= box["x0"] and box["x1"] <= box["width"], box)
        self.assertTrue(0 <= box["y0"] and box["y1"] <= box["height"], box)
        # the page ran it again before leaving: the loop went on past the single steps
        self.assertGreater(sim.steps, result["stepped"]["steps"])
        self.assertGreaterEqual(stats["connections"], 1)
        self.assertGreater(stats["frames_sent"], 0)
        # sync(timeout=0.2) never held the loop much longer than its timeout (plus a step)
        self.assertLess(longest_wait, 1.0)

    def test_errors(self):
        sim = moreau.Sim(moreau.World(os.path.join(ROOT, "scenes", "minimal.yaml")))
        with self.assertRaisesRegex(TypeError, "moreau.Sim"):
            moreau.viewer.launch(object())
        with self.assertRaisesRegex(ValueError, "port = -1"):
            moreau.viewer.launch(sim, port=-1)
        with self.assertRaisesRegex(ValueError, "speed = 0"):
            moreau.viewer.launch(sim, speed=0)
        with moreau.viewer.launch(sim, wait=False, realtime=False, quiet=True) as viewer:
            with self.assertRaisesRegex(ValueError, "timeout"):
                viewer.sync(timeout=-1)
            for _ in range(10):
                self.assertTrue(viewer.sync(timeout=1.0))
                sim.step()
        self.assertFalse(viewer.running)
        with self.assertRaisesRegex(RuntimeError, "closed"):
            viewer.sync()


if __name__ == "__main__":
    unittest.main()
