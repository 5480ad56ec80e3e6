"""MJCF models from Python: a World from an MJCF file, its actuators driven by Sim.set_ctrl."""
import math
import os
import tempfile
import unittest
import xml.etree.ElementTree as ET

import numpy as np

import moreau

PENDULUM = """<mujoco>
  <option gravity="0 0 0" timestep="0.01"/>
  <worldbody>
    <body><joint name="h" axis="0 0 1"/><geom size=".01" pos="2 0 0" mass="3"/></body>
  </worldbody>
  <actuator><motor name="m" joint="h" gear="4" ctrllimited="true" ctrlrange="-1 1"/></actuator>
  <keyframe><key name="k" qpos="0.5" ctrl="0.25"/></keyframe>
</mujoco>
"""


class TestMjcf(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "pendulum.xml")
        with open(self.path, "w") as f:
            f.write(PENDULUM)

    def tearDown(self):
        self.dir.cleanup()

    def test_motor_drives_the_joint(self):
        world = moreau.World(self.path)
        self.assertEqual(world.actuator_names, ["pendulum/m"])
        sim = moreau.Sim(world)
        sim.set_ctrl([0.5])
        sim.step(50)
        # τ = gear u on I = m l² + 2/5 m r²; semi-implicit Euler: q_n = h² a n (n + 1) / 2
        inertia = 3 * 4 + 3 * 0.4 * 1e-4
        a = 4 * 0.5 / inertia
        self.assertAlmostEqual(sim.q[0], 0.01 ** 2 * a * 50 * 51 / 2, places=12)

    def test_bad_controls(self):
        sim = moreau.Sim(moreau.World(self.path))
        with self.assertRaises(ValueError):
            sim.set_ctrl([1.0, 2.0])
        with self.assertRaises(ValueError):
            sim.set_ctrl([math.nan])

    def test_keyframe(self):
        sim = moreau.Sim(moreau.World(self.path))
        sim.reset_keyframe("pendulum/k")
        self.assertEqual(sim.q[0], 0.5)
        self.assertEqual(sim.torque[0], 4 * 0.25)
        with self.assertRaises(moreau.MoreauError):
            sim.reset_keyframe("pendulum/none")


# the Control Suite's actuated models that moreau simulates (docs/mjcf.md), under
# $MOREAU_SHARED/reference/mjcf
SUITE = ("acrobot", "cartpole", "cheetah", "hopper", "humanoid", "manipulator", "pendulum",
         "point_mass", "reacher", "stacker")


def _suite_dir():
    root = os.environ.get("MOREAU_SHARED") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "shared")
    d = os.path.join(root, "reference", "mjcf", "dm_control", "suite")
    return d if os.path.isdir(d) else None


def _motors(path):
    """The file's motors read independently of the loader: per actuator (in file order) its
    name, gear, ctrlrange (None unless limited) and [(joint, coefficient)] transmission. The
    suite's motors take gear, ctrlrange and ctrllimited from the element or from the main
    default's <motor>/<general> (no class of theirs sets them); fixed tendons list joints."""
    root = ET.parse(path).getroot()
    main = {}
    for d in root.findall("default"):  # the main default's own <motor>/<general>, only
        for e in list(d.findall("general")) + list(d.findall("motor")):
            main.update(e.attrib)
    tendons = {t.get("name"): [(j.get("joint"), float(j.get("coef", "1")))
                               for j in t.findall("joint")]
               for t in root.iter("fixed")}
    out = []
    for e in root.find("actuator"):
        a = dict(main, **e.attrib)
        limited = a.get("ctrllimited", "false") == "true"
        rng = tuple(float(x) for x in a["ctrlrange"].split()) if limited else None
        trn = [(a["joint"], 1.0)] if "joint" in a else tendons[a["tendon"]]
        out.append((e.get("name"), float(a.get("gear", "1").split()[0]), rng, trn))
    return out


class TestSuiteActuators(unittest.TestCase):
    """The suite's actuated models driven from Python: World.actuator_names lists the file's
    actuators, Sim.set_ctrl makes each motor's torque gear × clamp(u) × coefficient on its
    joints (read from the file here), and the driven model moves away from the undriven one."""

    def setUp(self):
        self.dir = _suite_dir()
        if self.dir is None:
            if os.environ.get("CI") == "true":
                self.fail("the MJCF reference models are missing")
            self.skipTest("no $MOREAU_SHARED/reference/mjcf")

    def test_driven(self):
        rng = np.random.default_rng(34)
        for model in SUITE:
            with self.subTest(model=model):
                path = os.path.join(self.dir, model + ".xml")
                world = moreau.World(path)
                motors = _motors(path)
                robot = world.actuator_names[0].split("/")[0]
                self.assertEqual(world.actuator_names, [f"{robot}/{m[0]}" for m in motors])
                sim = moreau.Sim(world)
                free = moreau.Sim(world)
                # half the controls beyond the range: clamped
                u = rng.uniform(-2.0, 2.0, len(motors))
                sim.set_ctrl(u)
                expected = np.zeros(world.nv)
                for (name, gear, rngs, trn), x in zip(motors, u):
                    if rngs is not None:
                        x = min(max(x, rngs[0]), rngs[1])
                    for joint, coef in trn:
                        expected[world.joint(f"{robot}/{joint}").dof] += gear * coef * x
                # products and sums of a few doubles: round-off only
                np.testing.assert_allclose(sim.torque, expected, rtol=1e-14, atol=1e-12)
                sim.step(20)
                free.step(20)
                self.assertGreater(np.max(np.abs(sim.q - free.q)), 1e-6)


if __name__ == "__main__":
    unittest.main()
