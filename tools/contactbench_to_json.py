#!/usr/bin/env python3
"""Convert a recorded ContactBench problem (.npz: G, g, mus[, lam0]) to moreau's contact-problem
JSON (the format read by src/contact/problem_io.c and `moreau solve`).

Usage: tools/contactbench_to_json.py IN.npz OUT.json [--dt SECONDS]   (needs python3-numpy)

Conventions. ContactBench's ContactProblem (include/contactbench/contact-problem.hpp) solves
c = G lam + g per contact in the order (t1, t2, n), with the Coulomb cone on lam and the
de Saxce correction on c: the same NCP and row order as moreau. Its quantities are impulses
(lam in N s) and velocities (c, g in m/s); moreau's are forces (lam / dt) and c / dt. With
lam_F = lam / dt, c / dt = G lam_F + g / dt: G carries over unchanged and g is divided by dt.
The time step is not stored in the files; the recorded problems have g_N = -9.81e-3 m/s on the
contacts of a body at rest under gravity (the free velocity -9.81 m/s^2 * dt), hence the default
dt = 1e-3 s. moreau's eps_abs = 1e-6 then means 1e-9 on ContactBench's primal and dual
criteria (N s, m/s) and 1e-12 on its complementarity (N s * m/s).

G is written as recorded (symmetric to 1e-12 absolute, relative 4e-17); no R is written
(ContactBench's compliance R_comp defaults to zero), nor the warm start lam0 (the corpus solves
cold).
"""
import argparse
import json
import sys

import numpy as np


def convert(npz_path, dt):
    z = np.load(npz_path)
    G = np.asarray(z["G"], dtype=float)
    g = np.asarray(z["g"], dtype=float).reshape(-1)
    mu = np.asarray(z["mus"], dtype=float).reshape(-1)
    n = g.size
    if G.shape != (n, n) or n != 3 * mu.size:
        sys.exit(f"{npz_path}: G is {G.shape}, g has {n} rows, {mu.size} friction coefficients: "
                 "expected G (3nc x 3nc), g (3nc), mus (nc)")
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(g)) and np.all(mu >= 0)):
        sys.exit(f"{npz_path}: non-finite G or g, or a negative friction coefficient")
    return {"nc": int(mu.size), "G": G.tolist(), "g": (g / dt).tolist(), "mu": mu.tolist(),
            "dt": dt}


def write(problem, out):
    # repr of a float is the shortest string that reads back to the same double
    f = lambda v: repr(float(v))
    rows = ",\n  ".join("[" + ", ".join(f(v) for v in row) + "]" for row in problem["G"])
    out.write('{"nc": %d,\n "G": [%s],\n' % (problem["nc"], rows))
    out.write(' "g": [%s],\n' % ", ".join(f(v) for v in problem["g"]))
    out.write(' "mu": [%s],\n' % ", ".join(f(v) for v in problem["mu"]))
    out.write(' "dt": %s}\n' % f(problem["dt"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("npz")
    ap.add_argument("json")
    ap.add_argument("--dt", type=float, default=1e-3, help="time step in s (default 1e-3)")
    a = ap.parse_args()
    if not a.dt > 0:
        sys.exit(f"--dt {a.dt}: the time step must be positive")
    problem = convert(a.npz, a.dt)
    with open(a.json, "w") as out:
        write(problem, out)


if __name__ == "__main__":
    main()
