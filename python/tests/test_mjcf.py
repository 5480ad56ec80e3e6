"""MJCF models from Python: a World from an MJCF file, its actuators driven by Sim.set_ctrl."""
import math
import os
import tempfile
import unittest

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


if __name__ == "__main__":
    unittest.main()
