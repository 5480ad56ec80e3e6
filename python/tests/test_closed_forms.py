"""Through the Python interface, against closed forms (the C side: tests/test_closed_forms.c):
a world wrench (Sim.set_wrench) on a turned, spinning body; the moment of the contact wrench
(Sim.contact_wrenches) of bodies whose centre of mass is off their origin, against the contacts
list (Sim.contacts) and static equilibrium; PD targets written each step (Sim.set_target) against
the step's recurrence with the target at the step's end.

Run by `make test` with MOREAU_LIB and MOREAU_BIN set."""
import os
import tempfile
import unittest

import numpy as np

import moreau

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EPS = np.finfo(float).eps


def world_from(text):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=ROOT, delete=False) as f:
        f.write(text)
    try:
        return moreau.World(f.name)
    finally:
        os.unlink(f.name)


class TestWrenchOnTurnedBody(unittest.TestCase):
    """A 2 kg box (three distinct moments) turned 90 degrees about z, and 2.1 rad about a generic
    axis, spinning, in zero gravity, under a world force along +x (then +y) and a torque about
    world y (then z) set with Sim.set_wrench. The centre (the origin) moves by the semi-implicit
    sum dt^2 F/m n(n+1)/2 = F t^2/2m + F dt t/2m (the scheme's first-order term) to
    16 n eps |dp| + n eps (|p0| + 1) (a few roundings of u per step as it is turned into the body
    frame and back); the world momentum R I omega gains dt tau per step exactly, to the documented
    10 n eps (|L0| + n dt |tau|). A force turned by R instead of R^T sends the box along -x."""

    def run_case(self, quaternion, force, torque):
        text = ("timestep: 0.001\ngravity: [0, 0, 0]\n"
                "bodies: [{name: box, mass: 2.0, position: [0.1, -0.2, 1.0],\n"
                "          orientation: [%.17g, %.17g, %.17g, %.17g],\n"
                "          angular_velocity: [0.5, -1.0, 2.0],\n"
                "          geoms: [{type: box, size: [0.4, 0.3, 0.2]}]}]\n" % tuple(quaternion))
        world = world_from(text)
        sim = moreau.Sim(world)
        box = world.body("box")
        n, dt, m = 200, 1e-3, box.mass
        p0 = sim.q[:3].copy()
        R, _ = sim.body_poses()
        L0 = R[box.index] @ box.inertia @ sim.v[3:6]
        sim.set_wrench("box", force, torque)
        sim.step(n)
        force, torque = np.asarray(force), np.asarray(torque)
        dp, t = sim.q[:3] - p0, n * dt
        exact = force * dt * dt / m * n * (n + 1) / 2
        tol = 16 * n * EPS * np.linalg.norm(exact) + n * EPS * (np.linalg.norm(p0) + 1)
        np.testing.assert_allclose(dp, exact, rtol=0, atol=tol)
        np.testing.assert_allclose(dp - force * t * t / (2 * m), force * dt * t / (2 * m),
                                   rtol=0, atol=tol)
        R, _ = sim.body_poses()
        L = R[box.index] @ box.inertia @ sim.v[3:6]
        tol_L = 10 * n * EPS * (np.linalg.norm(L0) + n * dt * np.linalg.norm(torque))
        np.testing.assert_allclose(L, L0 + n * dt * torque, rtol=0, atol=tol_L)

    def test_turned(self):
        s = np.sqrt(0.5)
        axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
        turns = [np.array([0, 0, s, s]), np.append(np.sin(1.05) * axis, np.cos(1.05))]
        for quaternion in turns:
            self.run_case(quaternion, [4.0, 0, 0], [0, 0.3, 0])
            self.run_case(quaternion, [0, 4.0, 0], [0, 0, 0.3])


def axis_angle(axis, angle):
    """the rotation by angle (rad) about axis"""
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def stack(T):
    """the slab and the block of tests/test_closed_forms.c on the floor, all tilted by T"""
    n = T @ [0, 0, 1]
    text = ("timestep: 0.001\ncontact: {margin: 0.001}\nsolver: {max_iter: 2000}\nbodies:\n"
            "  - {name: ground, fixed: true, geoms: [{type: halfspace, normal: [%.17g, %.17g, "
            "%.17g]}]}\n" % tuple(n))
    bodies = [("slab", 3.0, "[0.03, 0.05, 0.07]", "[0.12, -0.07, 0.02]", [0.3, 0.1, 0.05], 30.0,
               "[0.5, 0.4, 0.1]"),
              ("block", 1.0, "[0.004, 0.006, 0.008]", "[-0.05, 0.03, 0]", [0.33, 0.08, 0.15],
               -20.0, "[0.2, 0.16, 0.1]")]
    for name, mass, inertia, com, pos, yaw, size in bodies:
        p = T @ pos
        o = moreau.world.quaternion_of(T @ axis_angle([0, 0, 1], np.radians(yaw)))
        text += ("  - {name: %s, mass: %g, inertia: %s, com: %s,\n"
                 "     position: [%.17g, %.17g, %.17g], orientation: [%.17g, %.17g, %.17g, %.17g],\n"
                 "     geoms: [{type: box, size: %s}]}\n"
                 % ((name, mass, inertia, com) + tuple(p) + tuple(o) + (size,)))
    return world_from(text)


class TestContactWrenchMoment(unittest.TestCase):
    """A slab (centre of mass 0.12, -0.07, 0.02 m off its origin, turned 30 degrees) on the
    floor with a block (off-centre too) on it, at rest, on a level floor and with everything
    tilted 0.1 rad (the contact frames then differ from the world axes). For each body, Sim.contact_wrenches'
    moment about the body's origin at the step's start (Sim.body_poses before the step) equals
    the sum of +-(p_i - o) x f_i over Sim.contacts (+f on body[0], -f on body[1]) to
    8 eps sum |r||f| (the same terms, another order); static equilibrium: the force m g e_z and
    the moment (c - o) x m g e_z, c = o + R com, to nc eps_abs and nc eps_abs max|r| (each
    contact force within the solver's eps_abs = 1e-6 N of an exact equilibrium)."""

    def test_moment(self):
        for T in (np.eye(3), axis_angle([1, 2, 0], 0.1)):
            with self.subTest(tilted=not np.array_equal(T, np.eye(3))):
                self.check(stack(T))

    def check(self, world):
        sim = moreau.Sim(world)
        sim.step(500)
        R, p = sim.body_poses()
        sim.step(1)
        contacts, W = sim.contacts(), sim.contact_wrenches
        for name in ("slab", "block"):
            b = world.body(name)
            f, mo, sum_f, sum_rf, lever, nc = np.zeros(3), np.zeros(3), 0.0, 0.0, 0.0, 0
            for c in contacts:
                if b.index not in c["body"]:
                    continue
                fi = c["force"] if c["body"][0] == b.index else -c["force"]
                r = c["point"] - p[b.index]
                f, mo = f + fi, mo + np.cross(r, fi)
                sum_f += np.linalg.norm(fi)
                sum_rf += np.linalg.norm(r) * np.linalg.norm(fi)
                lever, nc = max(lever, np.linalg.norm(r)), nc + 1
            self.assertGreaterEqual(nc, 4)
            np.testing.assert_allclose(W[b.index, :3], f, rtol=0, atol=4 * EPS * sum_f)
            np.testing.assert_allclose(W[b.index, 3:], mo, rtol=0, atol=8 * EPS * sum_rf)
            weight = np.array([0.0, 0.0, b.mass * 9.81])
            c_w = p[b.index] + R[b.index] @ b.com
            moment = np.cross(c_w - p[b.index], weight)
            np.testing.assert_allclose(W[b.index, :3], weight, rtol=0, atol=nc * 1e-6)
            np.testing.assert_allclose(W[b.index, 3:], moment, rtol=0, atol=nc * 1e-6 * lever)
            self.assertGreater(np.hypot(*moment[:2]), 1e4 * nc * 1e-6 * lever)


class TestTargetsInDiscreteTime(unittest.TestCase):
    """The pendulum of scenes/models/pendulum.urdf without gravity (a rotor of inertia I) under
    PD (kp 2500, kd 50), its target set before each step to A sin(2 pi 5 Hz t + 0.3) at the
    step's end t + dt (the implicit PD acts on q+, docs/scene-format.md), against the step's
    recurrence M~ = I + dt kd + dt^2 kp, v+ = v + dt (kp (q_t - q) - (kd + dt kp) v)/M~,
    q+ = q + dt v+, to 1e-12 rad (the C test derives 6e-13 for these gains from the recurrence's
    step matrix; measured 3e-17); one step of lag moves q by 3.5e-3 rad."""

    def test_sine_target(self):
        world = world_from("timestep: 0.001\ngravity: [0, 0, 0]\nrobots:\n  - name: p\n"
                           "    urdf: scenes/models/pendulum.urdf\n    position: [0, 0, 2.0]\n"
                           "    pd: {kp: 2500.0, kd: 50.0}\n")
        sim = moreau.Sim(world)
        dt, kp, kd, A, f, phase = 1e-3, 2500.0, 50.0, 0.1, 5.0, 0.3
        I = sim.mass_matrix()[0, 0]
        Mt = I + dt * kd + dt * dt * kp
        target = lambda t: A * np.sin(2 * np.pi * f * t + phase)  # noqa: E731
        q = v = ql = vl = t = worst_lag = 0.0
        for _ in range(1000):
            sim.set_target("p/hinge", target(sim.time + dt))
            sim.step()
            v = v + dt * (kp * (target(t + dt) - q) - (kd + dt * kp) * v) / Mt
            q = q + dt * v
            vl = vl + dt * (kp * (target(t) - ql) - (kd + dt * kp) * vl) / Mt
            ql = ql + dt * vl
            t += dt
            self.assertAlmostEqual(sim.q[0], q, delta=1e-12)
            worst_lag = max(worst_lag, abs(ql - q))
        self.assertGreater(worst_lag, 1e-3)


if __name__ == "__main__":
    unittest.main()
