"""Recording a Python-driven run: the trajectory and contacts of a Sim's steps, written in the
format of `moreau run --out` / `--contacts` (docs/cli.md, "Trajectory columns") and replayed as
the same HTML page as `moreau view` (docs/viewer.md)."""

import os
import subprocess
import tempfile

import numpy as np

from . import _lib
from ._lib import as_count, lib, view
from .world import quaternion_of

_FREE_Q = ("x", "y", "z", "qx", "qy", "qz", "qw")
_FREE_V = ("vx", "vy", "vz", "wx", "wy", "wz")


def _field(name):
    """one CSV field, quoted as RFC 4180 says when it needs it (as the command line does)"""
    if any(c in name for c in ',"\r\n'):
        return '"' + name.replace('"', '""') + '"'
    return name


def _g17(x):
    return "%.17g" % x


def _mulv(R, v):
    """R v in the order of the library's mr_m3_mulv (the same roundings)"""
    return [R[i][0] * v[0] + R[i][1] * v[1] + R[i][2] * v[2] for i in range(3)]


class Recorder:
    """The steps of a Sim (sim.record()): one row per `every` steps with t, q, v, the optional
    column groups and the step's figures, and per recorded step its contacts. Nothing is
    formatted while the simulation runs; write_csv() writes the trajectory (and contacts) CSV
    exactly as `moreau run --out FILE --contacts FILE` would for the same steps of the same
    scene, write_html() the replay page of `moreau view` for them.

        rec = sim.record()                 # the scene's record options, or given here
        for k in range(2000):
            sim.joint("solo/FL_KFE").target = ...
            sim.step()
        rec.write_csv("run.csv", contacts="run_contacts.csv")
        rec.write_html("run.html")         # open in a browser

    Options (None: the scene's record block): every (int >= 1), contacts (bool), energy,
    solver_stats, world_velocity, poses, com (bools). t, q, v give the recorded arrays;
    stop() ends the recording (also on leaving a `with` block)."""

    __slots__ = ("sim", "every", "contacts", "energy", "solver_stats", "world_velocity",
                 "poses", "com", "_count", "_rows", "_contact_rows")

    def __init__(self, sim, every=None, contacts=None, energy=None, solver_stats=None,
                 world_velocity=None, poses=None, com=None):
        rec = sim.world.record
        self.sim = sim
        self.every = rec["every"] if every is None else as_count(every, "every")
        if self.every < 1:
            raise ValueError(f"every = {self.every}: record every N >= 1 steps")
        flags = dict(contacts=contacts, energy=energy, solver_stats=solver_stats,
                     world_velocity=world_velocity, poses=poses, com=com)
        for key, value in flags.items():
            scene = rec["contact_forces" if key == "contacts" else key]
            if value is not None and not isinstance(value, (bool, np.bool_, int)):
                raise TypeError(f"{key}: expected a bool, got {type(value).__name__}")
            setattr(self, key, bool(scene if value is None else value))
        self._count, self._rows, self._contact_rows = 0, [], []
        sim._recorders.append(self)

    def __repr__(self):
        return (f"<moreau.Recorder of {self.sim!r}: {len(self._rows)} rows, every "
                f"{self.every} steps{', contacts' if self.contacts else ''}>")

    def __len__(self):
        return len(self._rows)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        """Stop recording (what was recorded stays)."""
        if self in self.sim._recorders:
            self.sim._recorders.remove(self)

    # ---- capture, after each step ----

    def _capture(self, sim):
        self._count += 1
        if self._count % self.every:
            return
        st = lib.mr_sim_last(sim._ptr).contents
        X = None
        if self.world_velocity or self.poses:
            X = view(lib.mr_sim_body_poses(sim._ptr), (sim.world.nbodies, 12)).copy()
        com = [sim.com(r) for r in sim.world.robots] if self.com else None
        stats = (st.kinetic + st.potential, st.ncontacts, st.iterations, st.eps_abs,
                 st.penetration, st.solve_us, st.iterations_sum)
        t = sim.time
        self._rows.append((t, sim._q.copy(), sim._v.copy(), X, com, stats))
        if self.contacts:
            self._contact_rows.append((t, sim.contacts()))

    # ---- the recorded arrays ----

    @property
    def t(self):
        """the recorded times (rows,), s"""
        return np.array([r[0] for r in self._rows])

    @property
    def q(self):
        """the recorded configurations (rows, nq)"""
        return np.array([r[1] for r in self._rows]).reshape(-1, self.sim.world.nq)

    @property
    def v(self):
        """the recorded velocities (rows, nv)"""
        return np.array([r[2] for r in self._rows]).reshape(-1, self.sim.world.nv)

    # ---- CSV ----

    def header(self):
        """The trajectory CSV's column names: t, q, v (named after the joints), the optional
        groups, then energy, ncontacts and the solver figures, as `moreau run --out`."""
        w = self.sim.world
        cols = ["t"]
        joints = w.joints()
        for velocity in (False, True):
            for j in joints:
                if j.type == "free":
                    sfx = _FREE_V if velocity else _FREE_Q
                elif j.type == "spherical":
                    sfx = _FREE_V[3:] if velocity else _FREE_Q[3:]
                else:
                    sfx = ("v",) if velocity else ("q",)
                cols += [f"{j.name}_{s}" for s in sfx]
        if self.world_velocity:
            cols += [f"{j.name}_world_{s}" for j in joints if j.type == "free" for s in _FREE_V]
        if self.poses:
            cols += [f"{b}_p{s}" if k < 3 else f"{b}_{s}" for b in w.body_names[1:]
                     for k, s in enumerate(_FREE_Q)]
        if self.com:
            cols += [f"{r}/com_{s}" for r in w.robots for s in "xyz"]
        cols += ["energy", "ncontacts"] if self.energy else ["ncontacts"]
        cols += (["iterations", "eps_abs", "penetration", "solve_us", "iterations_sum"]
                 if self.solver_stats else ["penetration"])
        return cols

    def _line(self, row):
        t, q, v, X, com, stats = row
        energy, nc, iters, eps, pen, solve_us, iters_sum = stats
        out = ["%.9g" % t] + [_g17(x) for x in q] + [_g17(x) for x in v]
        w = self.sim.world
        if self.world_velocity:
            for j in w.joints():
                if j.type != "free":
                    continue
                R = X[j.body, :9].reshape(3, 3).tolist()
                lin, ang = v[j.idx_v:j.idx_v + 3].tolist(), v[j.idx_v + 3:j.idx_v + 6].tolist()
                out += [_g17(x) for x in _mulv(R, lin) + _mulv(R, ang)]
        if self.poses:
            for b in range(1, w.nbodies):
                out += [_g17(x) for x in X[b, 9:12]]
                out += [_g17(x) for x in quaternion_of(X[b, :9].reshape(3, 3))]
        if self.com:
            out += [_g17(x) for c in com for x in c]
        if self.energy:
            out.append(_g17(energy))
        out.append("%d" % nc)
        if self.solver_stats:
            out += ["%d" % iters, "%.6g" % eps, "%.6g" % pen, "%.3f" % solve_us,
                    "%d" % iters_sum]
        else:
            out.append("%.6g" % pen)
        return ",".join(out) + "\n"

    def _contact_lines(self):
        names = self.sim.world.geom_names
        for t, cs in self._contact_rows:
            for i, c in enumerate(cs):
                yield ("%.9g,%d," % (t, i) + _field(names[c["geom"][0]]) + "," +
                       _field(names[c["geom"][1]]) + "," +
                       ",".join("%.9g" % x for x in c["point"]) + "," +
                       ",".join("%.9g" % x for x in c["normal"]) + "," + "%.6g" % c["phi"] +
                       "," + ",".join("%.9g" % x for x in c["force_local"]) + "," +
                       ",".join("%.9g" % x for x in c["force"]) + "\n")

    def write_csv(self, path, contacts=None):
        """Write the trajectory CSV to path and, when contacts is a path, the contacts CSV
        (t, contact, geom1, geom2, px..pz, nx..nz, phi, lambda_t1, lambda_t2, lambda_n,
        fx..fz) — which needs the recorder to keep contacts (sim.record(contacts=True))."""
        if contacts is not None and not self.contacts:
            raise ValueError("contacts: this recorder does not keep contacts "
                             "(sim.record(contacts=True))")
        with open(path, "w") as f:
            f.write(",".join(_field(c) for c in self.header()) + "\n")
            for row in self._rows:
                f.write(self._line(row))
        if contacts is not None:
            with open(contacts, "w") as f:
                f.write("t,contact,geom1,geom2,px,py,pz,nx,ny,nz,phi,lambda_t1,lambda_t2,"
                        "lambda_n,fx,fy,fz\n")
                f.writelines(self._contact_lines())

    def write_html(self, path, fps=60):
        """The self-contained HTML replay of the recorded run: `moreau view` on the trajectory
        (and contacts) CSV with the world's scene (fps frames per simulated second, 0 for every
        recorded row). Needs the moreau command (moreau.bin_path())."""
        fps = _lib.as_scalar(fps, "fps", nonnegative=True)
        exe = _lib.bin_path()
        if not exe:
            raise _lib.MoreauError("write_html needs the moreau command: set MOREAU_BIN, or "
                                   "install it beside the library (make install)")
        if not self._rows:
            raise ValueError("nothing recorded: step the simulator after sim.record()")
        with tempfile.TemporaryDirectory() as d:
            traj = os.path.join(d, "trajectory.csv")
            cpath = os.path.join(d, "contacts.csv") if self.contacts else None
            self.write_csv(traj, contacts=cpath)
            cmd = [exe, "view", traj, "--scene", self.sim.world.path, "-o", os.fspath(path),
                   "--fps", "%g" % fps]
            if cpath:
                cmd += ["--contacts", cpath]
            r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise _lib.MoreauError(f"moreau view failed (status {r.returncode}): "
                                   f"{r.stderr.strip()}")
