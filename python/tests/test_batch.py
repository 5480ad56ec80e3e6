"""The Python batch (moreau.Batch) against Sims stepped one by one: bit for bit equal states
(np.array_equal, no tolerance: batch.h's static partition makes the arithmetic the same),
bulk arrays in and out, per-environment statuses, shape and value errors.

Run by `make test` with MOREAU_LIB set, like test_moreau.py."""
import os
import unittest

import numpy as np

import moreau

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TROT = os.path.join(ROOT, "scenes", "solo_trot_pd.yaml")
N, STEPS = 6, 100


class TestBatch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.world = moreau.World(TROT)
        w = cls.world
        cls.knee = w.dof("solo/FR_KFE")
        cls.hip = w.coordinate("solo/HL_HFE")

    def controls(self, batch):
        """per-environment knee torques and hip targets, as (n, nv) and (n, nq) arrays"""
        tau, target = batch.get_controls()
        tau[:, self.knee] = 0.1 * (np.arange(N) - N / 2)
        target[:, self.hip] += 0.05 * np.arange(N)
        return tau, target

    def alone(self, tau, target):
        """the same environments as Sims stepped one by one"""
        q, v = [], []
        for i in range(N):
            sim = moreau.Sim(self.world)
            sim.torque[:] = tau[i]
            sim.target[:] = target[i]
            sim.step(STEPS)
            q.append(sim.q.copy())
            v.append(sim.v.copy())
        return np.array(q), np.array(v)

    def test_bitwise_equal_to_sims(self):
        """2 threads, controls in bulk, states out in bulk: the Sims' states exactly"""
        batch = moreau.Batch(self.world, N, threads=2)
        self.assertEqual((len(batch), batch.threads), (N, 2))
        tau, target = self.controls(batch)
        batch.set_controls(torque=tau, target=target)
        np.testing.assert_array_equal(batch.torque, tau)
        status = batch.step(STEPS)
        np.testing.assert_array_equal(status, np.zeros(N))
        q, v = self.alone(tau, target)
        self.assertTrue(np.array_equal(batch.q, q))
        self.assertTrue(np.array_equal(batch.v, v))
        self.assertFalse(np.array_equal(q[0], q[1]))  # the controls made them differ
        # environment i as a Sim: a view of the same memory
        self.assertTrue(np.array_equal(batch.sim(3).q, q[3]))
        self.assertEqual(batch.sim(3).steps, STEPS)

    def test_divergence_and_reset(self):
        """1e9 N on environment 2's base: |v| ≈ Δt F / m = 4e5 m/s > 1e4 after one step, so it
        fails at once and keeps its initial state while the others step on"""
        batch = moreau.Batch(self.world, N, threads=2)
        q0 = batch.q
        tau, _ = batch.get_controls()
        tau[2, 2] = 1e9
        batch.torque = tau
        status = batch.step(10)
        self.assertEqual(list(status != 0), [i == 2 for i in range(N)])
        self.assertIn("step", batch.errors()[2])
        self.assertTrue(np.array_equal(batch.q[2], q0[2]))
        self.assertEqual(batch.sim(0).steps, 10)
        batch.reset(2)
        np.testing.assert_array_equal(batch.step(1), np.zeros(N))

    def test_errors(self):
        batch = moreau.Batch(self.world, 2)
        with self.assertRaisesRegex(ValueError, r"q: expected shape \(2, %d\), got shape "
                                                r"\(3, %d\)" % (self.world.nq, self.world.nq)):
            batch.set_state(q=np.zeros((3, self.world.nq)))
        tau, _ = batch.get_controls()
        tau[1, 4] = np.nan
        with self.assertRaisesRegex(ValueError, r"torque\[1, 4\] = nan is not finite"):
            batch.set_controls(torque=tau)
        with self.assertRaisesRegex(moreau.MoreauError, "n = 0"):
            moreau.Batch(self.world, 0)
        with self.assertRaises(IndexError):
            batch.sim(2)


if __name__ == "__main__":
    unittest.main()
