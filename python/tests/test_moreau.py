"""The Python bindings against the C library's own results and closed forms.

Run by `make test` with MOREAU_LIB (the build's shared library) and MOREAU_BIN (the moreau
command) set. numpy is required: without it the import fails and so does the suite."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import moreau

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def scene(name):
    return os.path.join(ROOT, "scenes", name)


def scene_text(text):
    """A world from YAML text (written to a temporary file next to nothing else)."""
    f = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    f.write(text)
    f.close()
    try:
        return moreau.World(f.name)
    finally:
        os.unlink(f.name)


BALL = """timestep: 0.001
bodies: [{name: ball, mass: 2.0, position: [0, 0, 10], geoms: [{type: sphere, radius: 0.1}]}]
"""

BOX = """timestep: 0.001
contact: {margin: 0.001}
solver: {max_iter: 2000}
bodies:
  - {name: ground, fixed: true, geoms: [{type: halfspace}]}
  - {name: box, mass: 2.0, position: [0, 0, 0.05], geoms: [{type: box, size: [0.4, 0.3, 0.1]}]}
"""


class TestBindings(unittest.TestCase):
    def test_step_derivatives(self):
        """Sim.step_derivatives against `moreau derivatives --json` (the same steps, bitwise),
        the step it takes against Sim.step, and q+ = q (+) dt v+ on the 1-dof joints:
        dqn_dv = dt dvn_dv on their rows, exactly (one product each)."""
        world = moreau.World(scene("solo_stand.yaml"))
        sim, ref = moreau.Sim(world), moreau.Sim(world)
        sim.step(50)
        ref.step(51)
        jac = sim.step_derivatives()
        np.testing.assert_array_equal(sim.v, ref.v)
        out = subprocess.run([os.environ.get("MOREAU_BIN", os.path.join(ROOT, "build", "moreau")),
                              "derivatives", scene("solo_stand.yaml"), "--time", "0.05",
                              "--json"], capture_output=True, text=True, check=True).stdout
        import json
        cli = json.loads(out)
        for name in moreau.DERIVATIVE_NAMES:
            self.assertEqual(jac[name].shape, (world.nv, world.nv))
            np.testing.assert_array_equal(jac[name], np.array(cli[name]))
        np.testing.assert_array_equal(jac["dqn_dv"][6:], world.timestep * jac["dvn_dv"][6:])
        self.assertTrue(np.all(np.isfinite(jac["dvn_dq"])))
        # a point constraint is differentiated; an ellipsoid's contact is not: a clear error
        four_bar = moreau.Sim(moreau.World(scene("four_bar.yaml"))).step_derivatives()
        self.assertTrue(np.all(np.isfinite(four_bar["dvn_dq"])))
        egg = scene_text("""timestep: 0.001
bodies:
  - {name: ground, fixed: true, geoms: [{type: halfspace}]}
  - {name: egg, mass: 0.1, position: [0, 0, 0.0499],
     geoms: [{type: ellipsoid, radii: [0.03, 0.04, 0.05]}]}
""")
        with self.assertRaisesRegex(moreau.MoreauError, "ellipsoid"):
            moreau.Sim(egg).step_derivatives()

    def test_state_views_and_closed_form(self):
        """q and v are views; a written state steps as semi-implicit Euler says, exactly up to
        one rounding per operation (|z| <= 10: 1e-14)"""
        world = scene_text(BALL)
        sim = moreau.Sim(world)
        q = sim.q
        sim.v[:] = [0.5, 0, 0, 0, 0, 0]
        sim.step()
        dt, vz = 1e-3, -9.81e-3
        self.assertIs(q, sim.q)
        self.assertAlmostEqual(q[0], dt * 0.5, delta=1e-14)  # the view shows the new state
        self.assertAlmostEqual(q[2], 10.0 + dt * vz, delta=1e-14)
        self.assertAlmostEqual(sim.v[2], vz, delta=1e-14)
        self.assertAlmostEqual(sim.time, dt, delta=1e-15)
        sim.set_state(q=[0, 0, 5, 0, 0, 0, 2.0])
        self.assertEqual(sim.q[6], 1.0)  # normalised quaternion
        with self.assertRaisesRegex(ValueError,
                                    r"q\[2\] = nan is not finite \(ball/root_joint/z\)"):
            sim.set_state(q=[0, 0, np.nan, 0, 0, 0, 1])

    def test_torque_view_equals_setter_and_scene(self):
        """a torque written in the numpy view, through the setter, or in the scene gives the
        same trajectory bit for bit"""
        base = ("timestep: 0.001\nrobots:\n  - name: solo\n"
                f"    urdf: {ROOT}/robots/solo12/solo12.urdf\n    position: [0, 0, 1.0]\n")
        w, wt = scene_text(base), scene_text(base + "    torques: {FL_KFE: 0.4}\n")
        a, b, c = moreau.Sim(w), moreau.Sim(w), moreau.Sim(wt)
        a.torque[w.dof("solo/FL_KFE")] = 0.4
        b.set_torque("solo/FL_KFE", 0.4)
        for s in (a, b, c):
            s.step(100)
        np.testing.assert_array_equal(a.q, b.q)
        np.testing.assert_array_equal(a.q, c.q)
        free = moreau.Sim(w)
        free.step(100)
        self.assertFalse(np.array_equal(a.q, free.q))

    def test_matches_the_command_line(self):
        """the bindings step the library exactly as `moreau run` does (CSV written with 17
        significant digits: the round trip is exact)"""
        world = moreau.World(scene("a6_pushed_block.yaml"))
        sim = moreau.Sim(world)
        sim.step(200)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "traj.csv")
            subprocess.run([os.environ["MOREAU_BIN"], "run", scene("a6_pushed_block.yaml"),
                            "--duration", "0.2", "--quiet", "--out", out], check=True)
            with open(out) as f:
                rows = list(csv.reader(f))
        last = [float(x) for x in rows[-1][1:1 + world.nq]]
        np.testing.assert_array_equal(np.array(last), sim.q)

    def test_contacts_and_wrenches_of_a_resting_box(self):
        """the box's weight is carried by its four corner contacts: sum of normal forces and the
        box's contact wrench are m g within 1e-3 (the tolerance of tests/test_sim.c's resting
        box: solver tolerance plus residual settling)"""
        world = scene_text(BOX)
        sim = moreau.Sim(world)
        sim.step(1)
        # the first step solves from rest; at rest the previous step's forces solve the problem
        # (the consistent gap correction keeps it exactly solvable), 0 iterations
        self.assertGreater(sim.stats["iterations"], 0)
        sim.step(499)
        c = sim.contacts()
        mg = 2.0 * 9.81
        self.assertEqual(len(c), 4)
        self.assertEqual(sim.stats["ncontacts"], 4)
        self.assertAlmostEqual(c["force_local"][:, 2].sum(), mg, delta=1e-3 * mg)
        box = world.body("box")
        self.assertAlmostEqual(sim.contact_wrenches[box, 2], mg, delta=1e-3 * mg)
        self.assertTrue(sim.stats["converged"])
        self.assertLessEqual(sim.stats["eps_abs"], 1e-6)

    def test_stage_times_add_up(self):
        """the binding reads mr_step_timing field by field: the stages are non-negative and add
        up to the total, as tests/test_step_timing.c asserts on the struct itself (clock
        differences, exact; 6 roundings of partial sums: 6 ulp), which a field out of place
        (the consistency stage read as the solver's, the total as integration) would break;
        untimed (the default) the total is 0"""
        sim = moreau.Sim(scene_text(BOX))
        untimed = moreau.Sim(scene_text(BOX))
        sim.time_stages()
        for _ in range(20):
            sim.step(1)
            untimed.step(1)
            self.assertEqual(untimed.stats["timing"]["total"], 0.0)
            t = sim.stats["timing"]
            stages = [t[k] for k in ("kinematics", "collision", "dynamics", "assembly",
                                     "consistency", "solver", "integration")]
            self.assertTrue(all(x >= 0.0 for x in stages))
            self.assertGreater(t["solver"], 0.0)
            self.assertAlmostEqual(sum(stages), t["total"], delta=6 * 2.0 ** -52 * t["total"])

    def test_shared_world(self):
        """two simulators on one world run as two simulators on two worlds, bit for bit"""
        shared = moreau.World(scene("solo_trot_pd.yaml"))
        w1, w2 = moreau.World(scene("solo_trot_pd.yaml")), moreau.World(scene("solo_trot_pd.yaml"))
        a, b = moreau.Sim(shared), moreau.Sim(shared)
        c, d = moreau.Sim(w1), moreau.Sim(w2)
        for s, tau in ((a, 0.3), (b, -0.2), (c, 0.3), (d, -0.2)):
            s.set_torque("solo/FL_KFE", tau)
        for _ in range(200):
            for s in (a, b, c, d):
                s.step()
        np.testing.assert_array_equal(a.q, c.q)
        np.testing.assert_array_equal(b.q, d.q)

    def test_postures_names_and_errors(self):
        world = moreau.World(scene("solo_stand.yaml"))
        sim = moreau.Sim(world)
        sim.reset("solo", "straight_standing")
        self.assertEqual(sim.q[world.coordinate("solo/FL_HAA")], 0.0)
        self.assertEqual(sim.target[world.coordinate("solo/FL_HAA")], 0.0)
        with self.assertRaisesRegex(moreau.MoreauError, "standing"):
            sim.reset("solo", "sitting")
        with self.assertRaises(KeyError):
            world.dof("FL_KFE")
        with self.assertRaisesRegex(moreau.MoreauError, "no_such.yaml"):
            moreau.World("no_such.yaml")
        self.assertIn("solo/FL_KFE", world.dof_names)
        self.assertEqual(world.robots, ["solo"])
        # the centre of mass of the only robot is that of every body
        np.testing.assert_allclose(sim.com("solo"), sim.com(), rtol=0, atol=1e-14)

    def test_mpc_turns_on_command(self):
        """B9's MPC walk: a yaw-rate command set from Python turns the robot (1 s at 0.5 rad/s
        after 0.5 s walking forward: the heading turns by 0.5 rad, within 15 %)"""
        sim = moreau.Sim(moreau.World(scene("b9_solo_trot.yaml")))
        sim.step(500)
        q = sim.q
        yaw0 = np.arctan2(2 * (q[6] * q[5] + q[3] * q[4]), 1 - 2 * (q[4] ** 2 + q[5] ** 2))
        sim.set_mpc_velocity("solo", (0.0, 0.0, 0.5))
        sim.step(1000)
        q = sim.q
        yaw1 = np.arctan2(2 * (q[6] * q[5] + q[3] * q[4]), 1 - 2 * (q[4] ** 2 + q[5] ** 2))
        self.assertAlmostEqual(yaw1 - yaw0, 0.5, delta=0.075)
        st = sim.mpc_status("solo")
        self.assertEqual(st["fallen"], 0)
        self.assertEqual(st["solves"], 60)
        # the status's layout matches mpc.h: counts within the iteration cap, a small residual
        self.assertTrue(0 < st["iterations"] <= st["max_iterations"] <= 400)
        self.assertLess(st["kkt"], 0.1)
        # a CPU time in seconds: positive, far below the simulated second
        self.assertTrue(0.0 < st["qp_time"] < 1.0)
        with self.assertRaisesRegex(moreau.MoreauError, "not finite"):
            sim.set_mpc_velocity("solo", (float("nan"), 0.0, 0.0))
        with self.assertRaisesRegex(moreau.MoreauError, "no robot 'robo'"):
            sim.mpc_status("robo")

    def test_example_trots_upright(self):
        """python/examples/solo_trot.py: stands back up and trots; ends upright"""
        example = os.path.join(ROOT, "python", "examples", "solo_trot.py")
        r = subprocess.run([sys.executable, example, scene("solo_stand.yaml"), "3.0"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("upright", r.stdout)

    def test_example_ilqr_jumps(self):
        """python/examples/ilqr_solo_jump.py, briefly (10 iterations over 800 steps): every
        iteration keeps or lowers the cost, and the optimised torques, replayed open loop, make
        Solo-12 jump and land on its feet"""
        example = os.path.join(ROOT, "python", "examples", "ilqr_solo_jump.py")
        r = subprocess.run([sys.executable, example, "10", "800"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("cost decreased", r.stdout)
        line = [x for x in r.stdout.splitlines() if x.startswith("jump:")][0].split()
        out = {line[i]: float(line[i + 1]) for i in range(1, len(line), 2)}
        reach, g = 0.3446, 9.81  # the legs' reach below the trunk (the example's LEG_REACH)
        # flight: above the legs' reach no foot touches the ground (trunk level), and the apex
        # is near the 0.40 m asked for (the flight cost, 1e5 (z - z*)^2 averaged over the
        # window, is below 100 after these iterations: an RMS error under 3.2 cm)
        self.assertGreater(out["apex"], reach + 0.02, r.stdout)
        self.assertLess(abs(out["apex"] - 0.40), 0.032, r.stdout)
        # the feet are off the ground at least while the base is above their reach: on the
        # ballistic arc through the apex that lasts 2 sqrt(2 (apex - reach) / g) (the
        # simulator's contact list, not the height, decides "off"; one step of 1 ms of slack)
        self.assertGreater(out["airborne"], 2 * (2 * (out["apex"] - reach) / g) ** 0.5 - 1e-3,
                           r.stdout)
        # on its feet again: the trunk within 1 cm of its standing height (fallen it would lie
        # at ~0.1 m) and within 2 degrees of upright
        self.assertLess(abs(out["end_height"] - out["start_height"]), 0.01, r.stdout)
        self.assertLess(out["end_tilt"], 2.0, r.stdout)

    def test_example_ilqr_allegro_lowers_its_cost(self):
        """python/examples/ilqr_allegro_ball.py, briefly (2 iterations over 30 steps): the
        contacts between the ball and the fingers are differentiated, and the run lowers the
        cost without raising it at any iteration"""
        example = os.path.join(ROOT, "python", "examples", "ilqr_allegro_ball.py")
        r = subprocess.run([sys.executable, example, "2", "30"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("cost decreased", r.stdout)


if __name__ == "__main__":
    unittest.main()
