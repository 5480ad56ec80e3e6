"""The world's dynamics from Python (World.mass_matrix ... com_jacobian) against the command line
(`moreau rbd --json --derivatives --frame`, a different program on the URDF itself) and against
finite differences; the model read-outs (JointInfo, BodyInfo, FrameInfo) against the URDF file;
named access (Sim.joint, Sim.body) as views of the simulator.

Run by `make test` with MOREAU_LIB and MOREAU_BIN set."""
import json
import os
import subprocess
import tempfile
import threading
import unittest
import xml.etree.ElementTree as ET

import numpy as np

import moreau

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SOLO_URDF = os.path.join(ROOT, "robots", "solo12", "solo12.urdf")
ALLEGRO_URDF = os.path.join(ROOT, "robots", "allegro", "allegro_right_hand.urdf")
EPS = np.finfo(float).eps


def moreau_bin():
    return os.environ.get("MOREAU_BIN", os.path.join(ROOT, "build", "moreau"))


def rbd(urdf, floating, q, v, tau, a, frames):
    """`moreau rbd --json --derivatives` at (q, v, tau, a) with --frame per name"""
    lst = lambda x: ",".join("%.17g" % t for t in x)  # noqa: E731 (17 digits: exact)
    cmd = [moreau_bin(), "rbd", urdf, "--json", "--derivatives", "--q", lst(q), "--v", lst(v),
           "--tau", lst(tau), "--a", lst(a)]
    cmd += ["--floating"] if floating else []
    for f in frames:
        cmd += ["--frame", f]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def world_from(text):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    try:
        return moreau.World(f.name)
    finally:
        os.unlink(f.name)


class TestAgainstTheCommandLine(unittest.TestCase):
    """Every quantity bit for bit: the world compiled from a scene holds the URDF's model with
    the robot's prefix (the same numbers: a free-flyer's placement is the identity, composed
    exactly), both programs run the same algorithms, and rbd prints 17 significant digits (an
    exact round trip). Quaternions are the exception: Python's Pose and rbd turn the same
    rotation matrix into a quaternion by two formulas (Shepperd's largest-term branch, the
    trace branch), each a few roundings of entries of magnitude <= 1: within 4 eps."""

    def compare(self, world, prefix, urdf, floating, frames, seed):
        rng = np.random.default_rng(seed)
        q = world.random_configuration(seed)
        v, tau, a = (rng.normal(size=world.nv) for _ in range(3))
        cli = rbd(urdf, floating, q, v, tau, a, frames)
        q = np.array(cli["q"])  # rbd normalises the quaternion: start from its q
        self.assertEqual((cli["nq"], cli["nv"]), (world.nq, world.nv))
        np.testing.assert_array_equal(world.mass_matrix(q), np.array(cli["M"]))
        np.testing.assert_array_equal(world.bias(q, v), cli["nle"])
        np.testing.assert_array_equal(world.gravity(q), cli["gravity"])
        np.testing.assert_array_equal(world.aba(q, v, tau), cli["ddq"])
        np.testing.assert_array_equal(world.rnea(q, v, a), cli["tau_id"])
        self.assertEqual(world.kinetic_energy(q, v), cli["kinetic_energy"])
        self.assertEqual(world.potential_energy(q), cli["potential_energy"])
        np.testing.assert_array_equal(world.com(q), cli["com"])
        self.assertEqual(world.mass, cli["mass"])
        rd, ad = world.rnea_derivatives(q, v, a), world.aba_derivatives(q, v, tau)
        for key in ("dtau_dq", "dtau_dv"):
            np.testing.assert_array_equal(rd[key], np.array(cli[key]), key)
        for key in ("dddq_dq", "dddq_dv", "dddq_dtau"):
            np.testing.assert_array_equal(ad[key], np.array(cli[key]), key)
        # ∂τ/∂a from the derivative pass sums M's entries (<= 2.5 kg m² here, over at most 13
        # bodies) in another order than CRBA: 16 eps max|M|
        M = np.array(cli["M"])
        np.testing.assert_allclose(rd["M"], M, rtol=0, atol=16 * EPS * np.abs(M).max())
        for f in cli["frames"]:
            name = prefix + f["name"]
            pose = world.placement(name, q)
            np.testing.assert_array_equal(pose.position, f["position"], name)
            np.testing.assert_array_equal(pose.rotation, np.array(f["rotation"]), name)
            np.testing.assert_allclose(pose.quaternion, f["quaternion"], rtol=0, atol=4 * EPS)
            for ref in ("world", "local", "local_world_aligned"):
                np.testing.assert_array_equal(world.jacobian(name, q, ref),
                                              np.array(f["jacobian_" + ref]), f"{name} {ref}")
            self.assertEqual(world.frame(name).body, world.body(prefix + f["body"]).index)

    def test_solo_floating(self):
        world = moreau.World(os.path.join(ROOT, "scenes", "solo_stand.yaml"))
        for seed in (1, 2):
            self.compare(world, "solo/", SOLO_URDF, True,
                         ["FL_FOOT", "HR_FOOT", "base_link", "FR_UPPER_LEG"], seed)

    def test_world_from_urdf(self):
        """World.from_urdf holds the robot as moreau rbd loads it; names carry its name"""
        world = moreau.World.from_urdf(SOLO_URDF, floating=True)
        self.assertEqual(world.robots, ["solo12"])
        self.compare(world, "solo12/", SOLO_URDF, True, ["HL_FOOT"], 4)
        self.assertTrue(os.path.exists(world.path))  # the scene lives as long as the world

    def test_allegro_fixed_base(self):
        world = world_from(f"timestep: 0.001\nrobots:\n  - {{name: hand, urdf: {ALLEGRO_URDF}, "
                           "floating: false}\n")
        tips = [n.split("/", 1)[1] for n in world.frame_names if "tip" in n][:2]
        self.assertEqual(len(tips), 2, world.frame_names)
        self.compare(world, "hand/", ALLEGRO_URDF, False, tips + ["link_3.0"], 3)


def central(f, world, q, v, h):
    """(f(q ⊕ h v) − f(q ⊖ h v)) / 2h"""
    return (f(world.integrate(q, v, h)) - f(world.integrate(q, v, -h))) / (2 * h)


def angular_rate(world, name, q, v, h):
    """ω from R(q ⊕ h v) R(q ⊖ h v)ᵀ = exp(2h [ω]x) + O(h³): its skew part over 2h"""
    A = world.placement(name, world.integrate(q, v, h)).rotation
    B = world.placement(name, world.integrate(q, v, -h)).rotation
    S = A @ B.T
    return np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]]) / (4 * h)


class TestFiniteDifferences(unittest.TestCase):
    """Jacobians against central differences along q ⊕ h v, h = 1e-6. Truncation error
    h²/6 |x'''| with |x'''| <= |v|³ (reach 0.5 m, |v| ~ 4 rad/s: ~30) is 5e-12; the rounding of
    positions of size <= 1 m divided by 2h is 2.2e-16 / 1e-6 ~ 2e-10 per entry, a few times more
    through the integrate / placement chain: 1e-8 leaves a factor ~ 20."""
    H, TOL = 1e-6, 1e-8

    @classmethod
    def setUpClass(cls):
        cls.world = moreau.World(os.path.join(ROOT, "scenes", "solo_stand.yaml"))

    def test_frame_jacobians(self):
        w, rng = self.world, np.random.default_rng(5)
        for seed in range(3):
            q, v = w.random_configuration(seed), rng.normal(size=w.nv)
            for name in ("solo/FL_FOOT", "solo/HR_LOWER_LEG", "solo/base_link"):
                pdot = central(lambda x: w.placement(name, x).position, w, q, v, self.H)
                omega = angular_rate(w, name, q, v, self.H)
                pose = w.placement(name, q)
                R, p = pose.rotation, pose.position
                lwa, world, local = (w.jacobian(name, q, f) @ v
                                     for f in ("local_world_aligned", "world", "local"))
                np.testing.assert_allclose(lwa, np.r_[pdot, omega], rtol=0, atol=self.TOL)
                np.testing.assert_allclose(world, np.r_[pdot - np.cross(omega, p), omega],
                                           rtol=0, atol=self.TOL)
                np.testing.assert_allclose(local, np.r_[R.T @ pdot, R.T @ omega], rtol=0,
                                           atol=self.TOL)
                # the velocity read-out is J v, and world_aligned names the same reference
                np.testing.assert_array_equal(w.velocity(name, q, v), lwa)
                np.testing.assert_array_equal(w.jacobian(name, q, "world_aligned"),
                                              w.jacobian(name, q, "local_world_aligned"))

    def test_com_jacobian(self):
        w, rng = self.world, np.random.default_rng(6)
        q, v = w.random_configuration(11), rng.normal(size=w.nv)
        cdot = central(lambda x: w.com(x), w, q, v, self.H)
        np.testing.assert_allclose(w.com_jacobian(q) @ v, cdot, rtol=0, atol=self.TOL)
        np.testing.assert_allclose(w.com_jacobian(q, "solo") @ v, cdot, rtol=0, atol=self.TOL)
        # the free-flyer's linear columns move every body alike: d(com) = R d(base) exactly up
        # to the weights' rounding (a sum of 13 weights m_i / m: 13 eps)
        R = w.placement("solo/base_link", q).rotation
        np.testing.assert_allclose(w.com_jacobian(q)[:, :3], R, rtol=0, atol=13 * EPS)

    def test_energy_and_inverse_dynamics(self):
        """T = ½ vᵀ M v (two algorithms: nv² products of entries |M| <= 3, |v| ~ 4: 1e-12
        relative is 100 x their rounding); rnea(aba(τ)) = τ within cond(M) eps |τ| x 100"""
        w, rng = self.world, np.random.default_rng(7)
        q, v, tau = w.random_configuration(3), rng.normal(size=w.nv), rng.normal(size=w.nv)
        M = w.mass_matrix(q)
        self.assertAlmostEqual(w.kinetic_energy(q, v), 0.5 * v @ M @ v,
                               delta=1e-12 * abs(0.5 * v @ M @ v))
        com, g = w.com(q), w.gravity_vector
        self.assertAlmostEqual(w.potential_energy(q), -w.mass * g @ com, delta=1e-12)
        ddq = w.aba(q, v, tau)
        tol = 100 * np.linalg.cond(M) * EPS * np.abs(tau - w.bias(q, v)).max()
        np.testing.assert_allclose(w.rnea(q, v, ddq), tau, rtol=0, atol=tol)
        np.testing.assert_allclose(M @ ddq + w.bias(q, v), tau, rtol=0, atol=tol)
        # the configuration space: integrate then difference returns v (quaternion algebra:
        # 1e-12 for |v| ~ 4)
        np.testing.assert_allclose(w.difference(q, w.integrate(q, v)), v, rtol=0, atol=1e-12)


class TestModelAndNamedAccess(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.world = moreau.World(os.path.join(ROOT, "scenes", "solo_stand.yaml"))
        cls.urdf = ET.parse(SOLO_URDF).getroot()

    def link(self, name):
        return [x for x in self.urdf.iter("link") if x.get("name") == name][0]

    def test_body_and_joint_info_against_the_urdf(self):
        """numbers read from the URDF file as written (no arithmetic on the unmerged upper leg:
        exact), limits and axes of the knee, the foot frame's placement"""
        w = self.world
        inertial = self.link("FL_UPPER_LEG").find("inertial")
        body = w.body("solo/FL_UPPER_LEG")
        self.assertEqual(body.mass, float(inertial.find("mass").get("value")))
        np.testing.assert_array_equal(body.com, [float(x) for x in
                                                 inertial.find("origin").get("xyz").split()])
        I = inertial.find("inertia").attrib
        np.testing.assert_array_equal(body.inertia, [
            [float(I["ixx"]), float(I["ixy"]), float(I["ixz"])],
            [float(I["ixy"]), float(I["iyy"]), float(I["iyz"])],
            [float(I["ixz"]), float(I["iyz"]), float(I["izz"])]])
        self.assertEqual(int(body), body.index)  # usable as an index
        self.assertEqual(w.body(body.index).name, "solo/FL_UPPER_LEG")
        # the foot link is merged into the lower leg: its mass added, its frame kept
        m_lower = float(self.link("FL_LOWER_LEG").find("inertial/mass").get("value"))
        m_foot = float(self.link("FL_FOOT").find("inertial/mass").get("value"))
        self.assertEqual(w.body("solo/FL_LOWER_LEG").mass, m_lower + m_foot)
        foot = w.frame("solo/FL_FOOT")
        self.assertEqual(foot.body, w.body("solo/FL_LOWER_LEG").index)
        np.testing.assert_array_equal(foot.placement.position, [0, 0.008, -0.16])
        np.testing.assert_array_equal(foot.placement.rotation, np.eye(3))
        knee = w.joint("solo/FL_KFE")
        self.assertEqual((knee.type, knee.nq, knee.nv), ("revolute", 1, 1))
        self.assertEqual((knee.dof, knee.coordinate), (w.dof("solo/FL_KFE"),
                                                       w.coordinate("solo/FL_KFE")))
        np.testing.assert_array_equal([knee.lower[0], knee.upper[0]], [-10, 10])
        np.testing.assert_array_equal([knee.velocity_limit[0], knee.effort_limit[0]],
                                      [1000, 1000])
        np.testing.assert_array_equal(knee.axis, [0, 1, 0])
        np.testing.assert_array_equal(knee.placement.position, [0, 0.03745, -0.16])
        self.assertEqual(knee.body, w.body("solo/FL_LOWER_LEG").index)
        root = w.joint("solo/root_joint")
        self.assertEqual((root.type, root.q, root.v), ("free", slice(0, 7), slice(0, 6)))
        self.assertTrue(np.all(np.isinf(root.lower)) and np.all(root.lower < 0))
        self.assertAlmostEqual(sum(w.body(b).mass for b in range(w.nbodies)), w.mass,
                               delta=14 * EPS * w.mass)
        sphere = w.geom("solo/FL_foot")
        self.assertEqual((sphere.type, sphere.body), ("sphere", foot.body))
        self.assertEqual(sphere.size[0], 0.0191)

    def test_coordinate_names(self):
        w = self.world
        self.assertEqual(w.q_names[:7], ["solo/root_joint/" + s for s in
                                         ("x", "y", "z", "qx", "qy", "qz", "qw")])
        self.assertEqual(w.v_names[:6], ["solo/root_joint/" + s for s in
                                         ("vx", "vy", "vz", "wx", "wy", "wz")])
        self.assertEqual(w.q_names[w.coordinate("solo/HR_KFE")], "solo/HR_KFE")
        self.assertEqual(w.v_names[w.dof("solo/HR_KFE")], "solo/HR_KFE")
        self.assertEqual((len(w.q_names), len(w.v_names)), (w.nq, w.nv))
        self.assertEqual(len(set(w.q_names)), w.nq)  # every coordinate has its own name

    def test_unknown_names(self):
        w = self.world
        for call, pattern in ((lambda: w.joint("solo/FL_KNEE"), "closest: solo/FL_KFE"),
                              (lambda: w.joint("FL_KFE"), "closest: solo/FL_KFE"),
                              (lambda: w.body("solo/FL_UPPER"), "closest: solo/FL_UPPER_LEG"),
                              (lambda: w.frame("solo/FL_FOOTS"), "closest: solo/FL_FOOT"),
                              (lambda: w.geom("solo/FL_fot"), "closest: solo/FL_foot")):
            with self.assertRaisesRegex(KeyError, pattern):
                call()
        sim = moreau.Sim(w)
        with self.assertRaisesRegex(KeyError, "no joint 'solo/HR_HFEE'; closest: solo/HR_HFE"):
            sim.joint("solo/HR_HFEE")
        with self.assertRaisesRegex(KeyError, "no body 'base'; closest: solo/base_link"):
            sim.body("base")

    def test_joint_views_are_views(self):
        """a joint's arrays share the simulator's memory both ways"""
        w = self.world
        sim = moreau.Sim(w)
        knee = sim.joint("solo/FL_KFE")
        knee.target[0] = -1.2
        self.assertEqual(sim.target[w.coordinate("solo/FL_KFE")], -1.2)
        knee.target = -1.3
        self.assertEqual(sim.target[w.coordinate("solo/FL_KFE")], -1.3)
        knee.kp = 7.0
        knee.torque = 0.1
        self.assertEqual((sim.kp[knee.info.dof], sim.torque[knee.info.dof]), (7.0, 0.1))
        q_view = knee.q
        sim.step(20)
        self.assertEqual(q_view[0], sim.q[w.coordinate("solo/FL_KFE")])  # current after steps
        self.assertTrue(np.shares_memory(sim.joint("solo/root_joint").v, sim.v))
        base = sim.joint("solo/root_joint")
        q = base.q.copy()
        q[2] += 0.05
        base.q = q
        np.testing.assert_array_equal(sim.q[:7], q)
        # the same steps with the same values written without names
        ref = moreau.Sim(w)
        ref.target[w.coordinate("solo/FL_KFE")] = -1.3
        ref.kp[knee.info.dof], ref.torque[knee.info.dof] = 7.0, 0.1
        ref.step(20)
        ref.set_state(q=np.r_[q, ref.q[7:]])
        sim.step(5)
        ref.step(5)
        np.testing.assert_array_equal(sim.q, ref.q)
        self.assertIn("solo/FL_KFE", repr(knee))

    def test_body_views(self):
        """pose and velocity at the simulator's state equal the world's functions at sim.q
        (the same forward kinematics: exactly); contact_wrench is the row of contact_wrenches"""
        w = self.world
        sim = moreau.Sim(w)
        sim.step(50)
        base = sim.body("solo/base_link")
        pose = w.placement("solo/base_link", sim.q)
        np.testing.assert_array_equal(base.pose.position, pose.position)
        np.testing.assert_array_equal(base.rotation, pose.rotation)
        np.testing.assert_array_equal(base.velocity, w.velocity("solo/base_link", sim.q, sim.v))
        foot = sim.body("solo/FL_LOWER_LEG")
        np.testing.assert_array_equal(foot.contact_wrench, sim.contact_wrenches[foot.info.index])
        self.assertGreater(foot.contact_wrench[2], 0.0)  # standing: the ground pushes up
        np.testing.assert_array_equal(sim.mass_matrix(), w.mass_matrix(sim.q))
        np.testing.assert_array_equal(sim.jacobian("solo/FL_FOOT"),
                                      w.jacobian("solo/FL_FOOT", sim.q))
        np.testing.assert_array_equal(base.com, pose.rotation @ base.info.com + pose.position)
        self.assertIn("solo/base_link", repr(base))


class TestContactInverse(unittest.TestCase):
    def test_solo_standing(self):
        """Sim.contact_inverse at rest on Solo-12's four feet (flat ground, normals vertical):
        the normal forces carry the robot's weight (to 1e-5: the settled base's tilt), the
        base is balanced to 1e-6 and the feet stay in their cones; a misshapen f_ref is a ValueError naming it"""
        world = moreau.World(os.path.join(ROOT, "scenes", "solo_stand.yaml"))
        sim = moreau.Sim(world)
        sim.step(1000)
        r = sim.contact_inverse(np.zeros(world.nv))
        f = r["forces"]
        weight = 9.81 * world.mass
        self.assertTrue(r["converged"])
        self.assertLess(r["residual"], 1e-6)
        self.assertEqual(f.shape, (4, 3))
        self.assertTrue(np.all(np.hypot(f[:, 0], f[:, 1]) <= 0.9 * f[:, 2] + 1e-9))
        # the base's level to 1e-3 rad after settling: its weight split by cos(tilt) ≈ 1 − 5e-7
        self.assertAlmostEqual(f[:, 2].sum(), weight, delta=1e-5 * weight)
        with self.assertRaisesRegex(ValueError, r"f_ref: expected shape \(4, 3\)"):
            sim.contact_inverse(np.zeros(world.nv), f_ref=np.zeros((2, 3)))


class TestThreads(unittest.TestCase):
    def test_concurrent_queries(self):
        """each thread has its own scratch memory: four threads querying one world at once get
        the results of the same queries made one after the other, bit for bit"""
        w = moreau.World(os.path.join(ROOT, "scenes", "solo_stand.yaml"))
        qs = [w.random_configuration(s) for s in range(8)]
        serial = [(w.mass_matrix(q), w.jacobian("solo/FL_FOOT", q), w.com_jacobian(q))
                  for q in qs]
        results = [None] * 4

        def work(t):
            out = []
            for _ in range(25):
                out = [(w.mass_matrix(q), w.jacobian("solo/FL_FOOT", q), w.com_jacobian(q))
                       for q in qs]
            results[t] = out

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for r in results:
            for a, b in zip(r, serial):
                for x, y in zip(a, b):
                    np.testing.assert_array_equal(x, y)


if __name__ == "__main__":
    unittest.main()
