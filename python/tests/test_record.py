"""Recording a Python-driven run (Sim.record, moreau.Recorder) in the command line's formats: for
the same steps of the same scene the trajectory CSV equals `moreau run --out`'s character for
character (header and every value; solve_us, a clock reading, excepted), the contacts CSV equals
`--contacts`'s, and the HTML replay equals the page `moreau view` makes from the command line's
CSV, byte for byte.

Run by `make test` with MOREAU_LIB and MOREAU_BIN set."""
import os
import subprocess
import tempfile
import unittest

import numpy as np

import moreau

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def moreau_bin():
    return os.environ.get("MOREAU_BIN", os.path.join(ROOT, "build", "moreau"))


def cli_run(scene, steps, dt, out, contacts=None):
    cmd = [moreau_bin(), "run", scene, "--duration", repr(steps * dt), "--quiet", "--out", out]
    if contacts:
        cmd += ["--contacts", contacts]
    subprocess.run(cmd, check=True, capture_output=True)


def read(path):
    with open(path) as f:
        return f.read().splitlines()


class TestRecorder(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def assert_same_csv(self, mine, theirs, skip=("solve_us",)):
        a, b = read(mine), read(theirs)
        self.assertEqual(a[0], b[0])  # the header
        self.assertEqual(len(a), len(b))
        cols = a[0].split(",")
        keep = [i for i, c in enumerate(cols) if c not in skip]
        for k, (x, y) in enumerate(zip(a[1:], b[1:])):
            x, y = x.split(","), y.split(",")
            self.assertEqual([x[i] for i in keep], [y[i] for i in keep], f"row {k + 1}")

    def test_allegro_hold_as_the_command_line(self):
        """b8_allegro_hold records contacts and solver figures: 200 steps of the ball held by
        the hand, contacts every step"""
        scene = os.path.join(ROOT, "scenes", "b8_allegro_hold.yaml")
        world = moreau.World(scene)
        sim = moreau.Sim(world)
        rec = sim.record()
        self.assertTrue(rec.contacts)  # the scene's record.contact_forces
        sim.step(200)
        self.assertEqual(len(rec), 200)
        rec.write_csv(self.path("py.csv"), contacts=self.path("py_contacts.csv"))
        cli_run(scene, 200, world.timestep, self.path("cli.csv"), self.path("cli_contacts.csv"))
        self.assert_same_csv(self.path("py.csv"), self.path("cli.csv"))
        self.assertEqual(read(self.path("py_contacts.csv")), read(self.path("cli_contacts.csv")))
        self.assertGreater(len(read(self.path("cli_contacts.csv"))), 200)  # contacts recorded
        # the replay page: the same bytes as moreau view on the command line's files
        rec.write_html(self.path("py.html"))
        subprocess.run([moreau_bin(), "view", self.path("cli.csv"), "--scene", world.path,
                        "--contacts", self.path("cli_contacts.csv"), "-o",
                        self.path("cli.html")], check=True, capture_output=True)
        with open(self.path("py.html"), "rb") as f, open(self.path("cli.html"), "rb") as g:
            self.assertEqual(f.read(), g.read())

    def test_optional_columns(self):
        """a scene asking for world velocities, poses and centres of mass every 3 steps, without
        energy and solver figures: the same columns, the same numbers"""
        text = ("timestep: 0.001\nduration: 0.3\n"
                "bodies:\n  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n"
                "  - {name: box, mass: 1.0, position: [0.5, 0, 0.2], geoms: [{type: box, "
                "size: [0.1, 0.1, 0.1]}]}\n"
                f"robots:\n  - {{name: solo, urdf: {ROOT}/robots/solo12/solo12.urdf, floating: "
                "true, posture: standing, pd: {kp: 20.0, kd: 0.5}}\n"
                "record: {every: 3, world_velocity: true, poses: true, com: true, energy: false, "
                "solver_stats: false}\n")
        scene = self.path("scene.yaml")
        with open(scene, "w") as f:
            f.write(text)
        world = moreau.World(scene)
        sim = moreau.Sim(world)
        with sim.record() as rec:
            sim.step(300)
        sim.step(10)  # after the with block: not recorded
        self.assertEqual(len(rec), 100)
        rec.write_csv(self.path("py.csv"))
        cli_run(scene, 300, world.timestep, self.path("cli.csv"))
        self.assert_same_csv(self.path("py.csv"), self.path("cli.csv"), skip=())
        header = read(self.path("py.csv"))[0].split(",")
        for col in ("box/root_joint_world_wz", "solo/base_link_qw", "solo/com_z",
                    "solo/FL_KFE_v", "penetration"):
            self.assertIn(col, header)
        self.assertNotIn("energy", header)

    def test_python_driven_run(self):
        """a run steered from Python between steps: the recorded rows are the states the loop
        saw, and the page is written"""
        world = moreau.World(os.path.join(ROOT, "scenes", "solo_stand.yaml"))
        sim = moreau.Sim(world)
        rec = sim.record(every=2, contacts=True, poses=True)
        knee, seen, times = sim.joint("solo/FL_KFE"), [], []
        for k in range(100):
            knee.target = -1.6 + 0.3 * np.sin(0.05 * k)
            sim.step()
            if k % 2 == 1:
                seen.append(sim.q.copy())
                times.append(sim.time)
        np.testing.assert_array_equal(rec.q, np.array(seen))
        np.testing.assert_array_equal(rec.t, times)
        self.assertEqual(rec.v.shape, (50, world.nv))
        rec.write_html(self.path("run.html"))
        with open(self.path("run.html")) as f:
            page = f.read()
        self.assertTrue('"bodies":["universe","solo/base_link"' in page)
        self.assertTrue('"nframes":' in page)
        rec.stop()
        sim.step(4)
        self.assertEqual(len(rec), 50)

    def test_errors(self):
        world = moreau.World(os.path.join(ROOT, "scenes", "solo_stand.yaml"))
        sim = moreau.Sim(world)
        with self.assertRaisesRegex(ValueError, "every = 0"):
            sim.record(every=0)
        with self.assertRaisesRegex(TypeError, "every: expected a non-negative integer"):
            sim.record(every=1.5)
        with self.assertRaisesRegex(TypeError, "poses: expected a bool"):
            sim.record(poses="yes")
        rec = sim.record()
        with self.assertRaisesRegex(ValueError, "nothing recorded"):
            rec.write_html(self.path("x.html"))
        sim.step(2)
        with self.assertRaisesRegex(ValueError, "does not keep contacts"):
            rec.write_csv(self.path("x.csv"), contacts=self.path("c.csv"))


if __name__ == "__main__":
    unittest.main()
