"""Bad input never reaches the library: every setter and array argument of Sim, Batch, World and
the views checks dtype, shape and finiteness, and raises TypeError / ValueError naming the
argument with the expected and received shapes; state properties cannot be rebound; a NaN
written in place is refused before the step; step(n) refuses n < 0 and non-integers.

Each case is the issue's list (set_state with nq - 1 and nq + 3 entries, a 2-vector force,
sim.q = x rebinding, step(-1), NaN written into q) or one found while writing the checks. A
refused call must also leave the simulator exactly as it was (compared bit for bit)."""
import gc
import os
import unittest

import numpy as np

import moreau

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SOLO = os.path.join(ROOT, "scenes", "solo_stand.yaml")


class Snapshot:
    """the simulator's state and controls, to assert that a refused call changed nothing"""

    def __init__(self, sim):
        self.sim = sim
        self.arrays = [getattr(sim, k).copy() for k in ("q", "v", "torque", "target", "kp", "kd")]
        self.steps, self.time = sim.steps, sim.time

    def unchanged(self, test):
        now = [getattr(self.sim, k) for k in ("q", "v", "torque", "target", "kp", "kd")]
        for a, b in zip(self.arrays, now):
            np.testing.assert_array_equal(a, b)
        test.assertEqual((self.sim.steps, self.sim.time), (self.steps, self.time))


class TestSimInputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.world = moreau.World(SOLO)

    def setUp(self):
        self.sim = moreau.Sim(self.world)
        self.sim.step(3)
        self.snap = Snapshot(self.sim)

    def refused(self, exc, pattern, fn, *args, **kw):
        with self.assertRaisesRegex(exc, pattern):
            fn(*args, **kw)
        self.snap.unchanged(self)

    def test_set_state_shapes(self):
        """q with nq - 1 entries (the library used to read past the buffer) and nq + 3 (used to
        be accepted silently): ValueError with both shapes"""
        q = self.sim.q.copy()
        self.refused(ValueError, r"q: expected shape \(19,\), got shape \(18,\)",
                     self.sim.set_state, q=q[:-1])
        self.refused(ValueError, r"q: expected shape \(19,\), got shape \(22,\)",
                     self.sim.set_state, q=np.concatenate([q, [0, 0, 0]]))
        self.refused(ValueError, r"v: expected shape \(18,\), got shape \(3, 6\)",
                     self.sim.set_state, v=np.zeros((3, 6)))
        self.refused(ValueError, r"q: expected shape \(19,\), got shape \(\)",
                     self.sim.set_state, q=1.0)

    def test_set_state_dtypes_and_values(self):
        q = self.sim.q.copy()
        self.refused(TypeError, r"q: expected real numbers .* got dtype complex128",
                     self.sim.set_state, q=q.astype(complex))
        self.refused(TypeError, r"q: expected real numbers .* got dtype bool",
                     self.sim.set_state, q=np.ones(19, dtype=bool))
        self.refused(TypeError, r"q: expected real numbers .* got dtype <U1",
                     self.sim.set_state, q=["a"] * 19)
        self.refused(TypeError, r"v: expected real numbers .* got dtype object",
                     self.sim.set_state, v=[None] * 18)
        self.refused(TypeError, r"q: expected an array .* got str", self.sim.set_state, q="q")
        self.refused(ValueError, r"q: expected an array of shape \(19,\)",
                     self.sim.set_state, q=[[1, 2], [3]])
        bad = q.copy()
        bad[9] = np.nan
        self.refused(ValueError, r"q\[9\] = nan is not finite \(solo/FL_KFE\)",
                     self.sim.set_state, q=bad)
        v = np.zeros(18)
        v[4] = np.inf
        self.refused(ValueError, r"v\[4\] = inf is not finite \(solo/root_joint/wy\)",
                     self.sim.set_state, v=v)
        zero = q.copy()
        zero[3:7] = 0.0
        self.refused(moreau.InvalidInputError, "quaternion", self.sim.set_state, q=zero)
        # integer arrays are numbers: accepted and converted
        self.sim.set_state(v=np.zeros(18, dtype=np.int64))
        np.testing.assert_array_equal(self.sim.v, np.zeros(18))

    def test_state_properties_are_not_rebound(self):
        """sim.q = x writes into the simulator (the array object stays the simulator's own, and
        the next step starts from x); a wrong shape is refused"""
        view = self.sim.q
        x = view.copy()
        x[2] += 0.01
        self.sim.q = x
        self.assertIs(self.sim.q, view)
        np.testing.assert_array_equal(self.sim.q, x)
        ref = moreau.Sim(self.world)
        ref.step(3)
        ref.set_state(q=x)
        self.sim.step()
        ref.step()
        np.testing.assert_array_equal(self.sim.q, ref.q)
        self.snap = Snapshot(self.sim)
        for name, n in (("q", 19), ("v", 18), ("torque", 18), ("target", 19), ("kp", 18),
                        ("kd", 18)):
            with self.assertRaisesRegex(ValueError, rf"{name}: expected shape \({n},\), got "
                                                    rf"shape \({n + 1},\)"):
                setattr(self.sim, name, np.zeros(n + 1))
            self.snap.unchanged(self)
        with self.assertRaises(AttributeError):  # no new attribute by a typo
            self.sim.qpos = x
        with self.assertRaises(AttributeError):
            self.sim.contact_wrenches = np.zeros((14, 6))
        with self.assertRaises(ValueError):  # a read-only view
            self.sim.contact_wrenches[1, 2] = 1.0

    def test_gains_checked(self):
        kp = self.sim.kp.copy()
        kp[8] = -1.0
        self.refused(ValueError, r"kp\[8\] = -1.0 is negative \(solo/FL_KFE\)", setattr,
                     self.sim, "kp", kp)
        kp[8], kp[2] = 1.0, 5.0
        self.refused(ValueError, r"kp\[2\] = 5.0: solo/root_joint/vz is a dof of a free joint",
                     setattr, self.sim, "kp", kp)
        self.refused(ValueError, r"kd = -0.5 is negative", self.sim.set_gains,
                     "solo/FL_KFE", 1.0, -0.5)
        self.refused(ValueError, r"kp = nan is not finite", self.sim.set_gains,
                     "solo/FL_KFE", np.nan, 0.5)

    def test_nan_written_in_place_is_caught_before_the_step(self):
        """a NaN written into the views is refused by step() with the entry and its joint
        named, nothing stepped (it used to surface as an LDLT pivot error)"""
        for name, k, joint in (("q", 9, "solo/FL_KFE"), ("v", 4, "solo/root_joint"),
                               ("torque", 8, "solo/FL_KFE"), ("target", 10, "solo/FR_HAA"),
                               ("kd", 8, "solo/FL_KFE")):
            sim = moreau.Sim(self.world)
            sim.step(2)
            snap = Snapshot(sim)
            arr = getattr(sim, name)
            before = arr[k]
            arr[k] = np.nan
            snap.arrays[("q", "v", "torque", "target", "kp", "kd").index(name)][k] = np.nan
            with self.assertRaisesRegex(moreau.InvalidInputError,
                                        rf"{name}\[{k}\] = nan \(joint '{joint}'.*\) is not "
                                        "finite; the step was not taken"):
                sim.step()
            snap.unchanged(self)
            arr[k] = before
            sim.step()  # repaired, it steps
            self.assertEqual(sim.steps, 3)
        sim = moreau.Sim(self.world)
        sim.kp[2] = 3.0  # a gain on the free-flyer, written in place
        with self.assertRaisesRegex(ValueError, r"kp\[2\] = 3 \(joint 'solo/root_joint'.*not 0 "
                                                "on a joint that is not 1-dof"):
            sim.step()
        sim = moreau.Sim(self.world)
        sim.q[3:7] = 0.0  # a zero quaternion written in place
        with self.assertRaisesRegex(ValueError, r"q\[3\] .* quaternion of zero norm"):
            sim.step()

    def test_step_count(self):
        self.refused(ValueError, r"n = -1 is negative", self.sim.step, -1)
        self.refused(TypeError, r"n: expected a non-negative integer, got float 1.5",
                     self.sim.step, 1.5)
        self.refused(TypeError, r"got float 2.0", self.sim.step, 2.0)
        self.refused(TypeError, r"got str", self.sim.step, "3")
        self.refused(TypeError, r"got bool", self.sim.step, True)
        self.sim.step(0)  # checks, steps nothing
        self.snap.unchanged(self)
        self.sim.step(np.int64(2))
        self.assertEqual(self.sim.steps, 5)

    def test_scalar_setters(self):
        self.refused(ValueError, r"tau = nan is not finite", self.sim.set_torque,
                     "solo/FL_KFE", np.nan)
        self.refused(TypeError, r"tau: expected a real number, got list", self.sim.set_torque,
                     "solo/FL_KFE", [1.0])
        self.refused(TypeError, r"q: expected a real number, got str", self.sim.set_target,
                     "solo/FL_KFE", "1")
        self.refused(KeyError, r"no joint 'solo/FL_KFEE'; closest: solo/FL_KFE",
                     self.sim.set_torque, "solo/FL_KFEE", 1.0)
        self.refused(KeyError, r"solo/root_joint' is a free joint with 6 dofs",
                     self.sim.set_target, "solo/root_joint", 0.0)
        self.refused(IndexError, r"dof = 18 out of range \[0, 18\)", self.sim.set_torque, 18,
                     1.0)
        self.refused(ValueError, r"time = inf is not finite", setattr, self.sim, "time",
                     np.inf)

    def test_wrench(self):
        """a 2-vector force used to be padded with zero"""
        self.refused(ValueError, r"force: expected shape \(3,\), got shape \(2,\)",
                     self.sim.set_wrench, "solo/base_link", (1, 2))
        self.refused(ValueError, r"torque\[1\] = nan is not finite", self.sim.set_wrench,
                     "solo/base_link", (1, 2, 3), (0, np.nan, 0))
        self.refused(KeyError, "no body 'base_link'", self.sim.set_wrench, "base_link",
                     (1, 2, 3))
        self.refused(ValueError, "world body", self.sim.set_wrench, 0, (1, 2, 3))
        self.refused(IndexError, r"body = 99 out of range", self.sim.set_wrench, 99, (1, 2, 3))
        body = self.sim.body("solo/base_link")
        with self.assertRaisesRegex(ValueError, r"wrench of body 'solo/base_link': expected "
                                                r"shape \(6,\), got shape \(3,\)"):
            body.wrench = (1, 2, 3)
        with self.assertRaises(ValueError):  # the read-out is read-only, not a silent copy
            body.wrench[0] = 1.0
        body.wrench = (1, 2, 3, 4, 5, 6)
        np.testing.assert_array_equal(body.wrench, [1, 2, 3, 4, 5, 6])
        np.testing.assert_array_equal(self.sim.get_wrench("solo/base_link")[0], [1, 2, 3])
        self.sim.reset()
        np.testing.assert_array_equal(body.wrench, np.zeros(6))

    def test_joint_views(self):
        j = self.sim.joint("solo/FL_KFE")
        with self.assertRaisesRegex(ValueError, r"target of joint 'solo/FL_KFE': expected shape "
                                                r"\(1,\), got shape \(2,\)"):
            j.target = [1.0, 2.0]
        with self.assertRaisesRegex(ValueError, r"target of joint 'solo/FL_KFE'\[0\] = nan"):
            j.target = np.nan
        with self.assertRaisesRegex(ValueError, "kp of joint 'solo/FL_KFE'.* is negative"):
            j.kp = -2.0
        root = self.sim.joint("solo/root_joint")
        with self.assertRaisesRegex(ValueError, r"q of joint 'solo/root_joint': expected shape "
                                                r"\(7,\), got shape \(6,\)"):
            root.q = np.zeros(6)
        with self.assertRaisesRegex(ValueError, "gains act on 1-dof joints only"):
            root.kd = np.ones(6)
        self.snap.unchanged(self)

    def test_constructors_and_names(self):
        with self.assertRaisesRegex(TypeError, "world: expected a moreau.World, got str"):
            moreau.Sim(SOLO)
        with self.assertRaisesRegex(moreau.MoreauError, "unknown solver|no solver|solver"):
            moreau.Sim(self.world, solver="no-such-solver")
        with self.assertRaisesRegex(TypeError, "give both robot and posture"):
            self.sim.reset("solo")
        with self.assertRaisesRegex(TypeError, r"joint: expected a name \(str\), got int"):
            self.world.joint(3)
        with self.assertRaisesRegex(IndexError, r"body = 14 out of range \[0, 14\)"):
            self.world.body(14)
        with self.assertRaisesRegex(KeyError, "no robot 'robo'; closest: solo"):
            self.world.robot("robo")


class TestLifetimes(unittest.TestCase):
    def test_world_outlives_its_simulators_in_a_cycle(self):
        """a simulator and its recorder refer to each other; collected together with their
        world, the finalisers run in no set order, and the world must be freed after the
        simulators and batches on it (B9's MPC controllers read the world's robots when freed;
        under make check AddressSanitizer reports any use after free)"""
        for scene in (SOLO, os.path.join(ROOT, "scenes", "b9_solo_trot.yaml")):
            world = moreau.World(scene)
            sim = moreau.Sim(world)
            rec = sim.record()
            sim.step(2)
            batch = moreau.Batch(world, 2)
            env0 = batch.sim(0)
            cycle = [world, sim, rec, batch, env0]
            cycle.append(cycle)
            del world, sim, rec, batch, env0, cycle
            gc.collect()
            # the order that fails: the world's finaliser first, then its simulators still step
            world = moreau.World(scene)
            sim, batch = moreau.Sim(world), moreau.Batch(world, 2)
            world.__del__()
            sim.step(2)
            np.testing.assert_array_equal(batch.step(2), [0, 0])
            del world, sim
            batch.step(1)
            del batch

    def test_owned_frees_once_after_the_last_user(self):
        freed = []
        h = moreau._lib.Owned(42, freed.append)
        h.acquire()
        h.acquire()
        h.disown()
        h.release()
        self.assertEqual(freed, [])
        h.release()
        self.assertEqual(freed, [42])
        h.disown()
        self.assertEqual(freed, [42])


class TestWorldInputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.world = moreau.World(SOLO)
        cls.q = cls.world.neutral()
        cls.q[2] = 0.3

    def test_dynamics_arguments(self):
        w, q = self.world, self.q
        v = np.zeros(w.nv)
        with self.assertRaisesRegex(ValueError, r"q: expected shape \(19,\), got shape \(18,\)"):
            w.mass_matrix(q[:-1])
        with self.assertRaisesRegex(ValueError, r"v: expected shape \(18,\), got shape \(19,\)"):
            w.bias(q, q)
        with self.assertRaisesRegex(ValueError, r"a\[3\] = nan is not finite"):
            w.rnea(q, v, np.where(np.arange(18) == 3, np.nan, 0.0))
        with self.assertRaisesRegex(ValueError, r"tau: expected shape \(18,\), got shape \(12,\)"):
            w.aba(q, v, np.zeros(12))
        with self.assertRaisesRegex(TypeError, "got dtype complex128"):
            w.gravity(q.astype(complex))
        with self.assertRaisesRegex(ValueError, "frame = 'body': expected one of 'world', "
                                                "'local'"):
            w.jacobian("solo/base_link", q, frame="body")
        with self.assertRaisesRegex(KeyError, "no body or frame 'solo/FL_FOTO'; closest: "
                                              "solo/FL_FOOT"):
            w.placement("solo/FL_FOTO", q)
        with self.assertRaisesRegex(ValueError, r"q0: expected shape"):
            w.difference(q[:3], q)
        with self.assertRaisesRegex(ValueError, "dt = nan is not finite"):
            w.integrate(q, v, np.nan)
        with self.assertRaisesRegex(TypeError, "seed: expected a non-negative integer"):
            w.random_configuration(1.5)

    def test_batch_arguments(self):
        w = self.world
        with self.assertRaisesRegex(ValueError, "n = -1 is negative"):
            moreau.Batch(w, -1)
        with self.assertRaisesRegex(TypeError, "threads: expected a non-negative integer"):
            moreau.Batch(w, 2, threads=1.0)
        b = moreau.Batch(w, 2)
        with self.assertRaisesRegex(ValueError, r"q: expected shape \(2, 19\), got shape "
                                                r"\(19,\)"):
            b.set_state(q=self.q)
        with self.assertRaisesRegex(ValueError, r"torque\[1, 4\] = nan is not finite "
                                                r"\(solo/root_joint/wy\)"):
            tau = np.zeros((2, 18))
            tau[1, 4] = np.nan
            b.torque = tau
        with self.assertRaisesRegex(ValueError, "read-only"):  # a copy: writing it would be lost
            b.q[0, 2] = 1.0
        with self.assertRaisesRegex(ValueError, "nsteps = -1 is negative"):
            b.step(-1)
        with self.assertRaisesRegex(TypeError, "nsteps: expected a non-negative integer"):
            b.step(0.5)
        with self.assertRaisesRegex(IndexError, r"environment = 2 out of range \[0, 2\)"):
            b.sim(2)
        # a NaN written through an environment's view: refused before anything is stepped
        b.sim(1).q[8] = np.nan
        q0 = b.get_state()[0][0].copy()
        with self.assertRaisesRegex(moreau.InvalidInputError, r"environment 1: q\[8\] = nan "
                                                              r"\(joint 'solo/FL_HFE'"):
            b.step(1)
        np.testing.assert_array_equal(b.get_state()[0][0], q0)
        self.assertEqual(b.sim(0).steps, 0)


if __name__ == "__main__":
    unittest.main()
