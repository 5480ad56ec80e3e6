#!/usr/bin/python3
"""Solo-12 crouching, standing back up and trotting in place under PD, from Python.

The controller runs between steps of the simulator. It writes the PD targets of the hips (HFE)
and knees (KFE) from a joint trajectory:
  t in [0, 1] s   crouch: the legs bend by up to 0.6 rad (knee) and 0.3 rad (hip)
  t in [1, 2] s   stand back up
  t >= 2 s        trot in place: diagonal pairs (FL, HR) and (FR, HL) in antiphase at 2 Hz, the
                  knee flexing 0.3 rad with a sine and the hip swinging 0.2 rad a quarter period
                  ahead (the gait of scenes/solo_trot_pd.yaml)
and closes the loop on the measured base height h: every bend gets k_h (h - h_ref) more, with
h_ref the reference height of the trajectory. Targets are written into the simulator's target
array (a numpy view); the simulator's implicit PD (scene gains) tracks them.

Prints the base height, contacts and solver figures every half second; exit status 0 when the
robot is upright and at its standing height at the end.

    /usr/bin/python3 python/examples/solo_trot.py [SCENE.yaml] [DURATION_S]
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np  # noqa: E402

import moreau  # noqa: E402

STAND, DEPTH, HEIGHT_GAIN = 0.235, 0.08, 4.0
LEGS = ("FL", "FR", "HL", "HR")


def crouch(t):
    """0 -> 1 over [0, 1] s, back to 0 over [1, 2] s."""
    x = t if t < 1.0 else (2.0 - t if t < 2.0 else 0.0)
    return 0.5 - 0.5 * math.cos(math.pi * x)


def trot(t, leg):
    """(hip, knee) offsets of a leg: diagonal pairs in antiphase, 2 Hz."""
    if t < 2.0:
        return 0.0, 0.0
    phase = 0.0 if leg in ("FL", "HR") else math.pi
    w = 2.0 * math.pi * 2.0 * (t - 2.0)
    return 0.2 * math.sin(w + phase + math.pi / 2), 0.3 * math.sin(w + phase)


class Controller:
    def __init__(self, world, sim):
        self.sim = sim
        self.base_z = world.robot("solo")["q"].start + 2
        self.hfe = [world.coordinate(f"solo/{leg}_HFE") for leg in LEGS]
        self.kfe = [world.coordinate(f"solo/{leg}_KFE") for leg in LEGS]

    def __call__(self, t):
        """Write the targets for the step starting at t; return the reference height."""
        c = crouch(t)
        h_ref = STAND - DEPTH * c
        bend = 0.6 * c + HEIGHT_GAIN * (self.sim.q[self.base_z] - h_ref)
        for i, leg in enumerate(LEGS):
            sign = 1.0 if leg[0] == "F" else -1.0  # hind legs bend the other way
            hip, knee = trot(t, leg)
            self.sim.target[self.hfe[i]] = sign * (0.8 + 0.5 * bend + hip)
            self.sim.target[self.kfe[i]] = sign * (-1.6 - bend - knee)
        return h_ref


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    scene = argv[1] if len(argv) > 1 else os.path.join(here, "..", "..", "scenes",
                                                       "solo_stand.yaml")
    duration = float(argv[2]) if len(argv) > 2 else 4.0
    world = moreau.World(scene)
    sim = moreau.Sim(world)
    control = Controller(world, sim)
    steps = int(round(duration / world.timestep))
    iterations = []
    for k in range(steps):
        h_ref = control(sim.time)
        sim.step()
        iterations.append(sim.stats["iterations"])
        if (k + 1) % 500 == 0:
            contacts = sim.contacts()
            print(f"t {sim.time:.2f} s  base height {sim.q[control.base_z]:.4f} m  "
                  f"reference {h_ref:.4f} m  contacts {len(contacts)}  "
                  f"normal force {contacts['force_local'][:, 2].sum():.2f} N  "
                  f"solver iterations {np.mean(iterations[-500:]):.1f}")
    R, _ = sim.body_poses()
    up = R[world.body("solo/base_link")][2, 2]  # the base's z axis against the world's
    height = sim.q[control.base_z]
    ok = up > 0.95 and abs(height - STAND) < 0.03
    print(f"{'upright' if ok else 'fell'}: base height {height:.4f} m, base z axis . world z "
          f"= {up:.4f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
