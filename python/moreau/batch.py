"""n simulators of one World stepped in parallel (batch.h)."""

import ctypes

import numpy as np

from . import _lib
from ._lib import _Error, _check, as_array, as_count, as_name, dptr, lib, readonly, view
from .sim import Sim
from .world import World


_step_checked = lib.mr_batch_step_checked


class Batch:
    """n simulators on one World stepped in parallel by a fixed pool of threads (batch.h).

        batch = moreau.Batch(world, 16, threads=2)
        target = batch.target                  # (n, nq) copy of the PD targets (read-only)
        target = target.copy()
        target[:, world.coordinate("solo/FL_KFE")] += actions
        batch.set_controls(target=target)      # or: batch.target = target
        status = batch.step(10)                # (n,) statuses, 0 = ok
        q, v = batch.q, batch.v                # (n, nq), (n, nv) copies

    Results are bit for bit those of n Sims stepped one by one, whatever the thread count. A
    diverging environment gets a non-zero status (its message in errors()) and stops for the
    rest of that call; the others go on. sim(i) is environment i as a Sim (views, per-joint
    setters, read-outs).

    q, v, torque, target read as (n, nq) / (n, nv) arrays that are copies and read-only (writing
    an entry raises instead of changing a copy silently); assigning one (batch.q = x) sets every
    environment, checked (shape, dtype, finite values) like set_state / set_controls."""

    __slots__ = ("world", "_ptr", "_uses", "n", "threads", "_status", "_err", "_eref",
                 "__weakref__")

    def __init__(self, world, n, threads=1, solver=None):
        if not isinstance(world, World):
            raise TypeError(f"world: expected a moreau.World, got {type(world).__name__}")
        n, threads = as_count(n, "n"), as_count(threads, "threads")
        if solver is not None:
            as_name(solver, "solver")
        err = _Error()
        self.world, self._uses = world, None  # the world kept alive as long as the batch
        self._ptr = lib.mr_batch_create(world._ptr, n, threads,
                                        solver.encode() if solver else None, ctypes.byref(err))
        if not self._ptr:
            _lib._raise(err)
        self._uses = world._handle  # the world stays allocated until the batch is freed
        self._uses.acquire()
        self.n, self.threads = lib.mr_batch_size(self._ptr), lib.mr_batch_threads(self._ptr)
        self._status = view(lib.mr_batch_status(self._ptr), (self.n,))
        self._err = _Error()
        self._eref = ctypes.byref(self._err)

    def __del__(self):
        if getattr(self, "_ptr", None):
            lib.mr_batch_free(self._ptr)
            self._ptr = None
        if getattr(self, "_uses", None) is not None:
            self._uses.release()
            self._uses = None

    def __len__(self):
        return self.n

    def __repr__(self):
        return f"<moreau.Batch of {self.n} on {self.world!r}, {self.threads} threads>"

    def sim(self, i):
        """Environment i as a Sim (its memory is the batch's; valid while the batch lives)."""
        i = _lib.as_index(i, self.n, "environment")
        return Sim._borrowed(self.world, lib.mr_batch_sim(self._ptr, i), self)

    def step(self, nsteps=1):
        """nsteps (an int >= 0) steps of every environment; returns the (n,) statuses (0 = ok),
        a copy. Inputs written in place through sim(i)'s views are checked first:
        InvalidInputError naming the environment and the entry, nothing stepped."""
        if type(nsteps) is not int or nsteps < 0:
            nsteps = as_count(nsteps, "nsteps")
        if _step_checked(self._ptr, nsteps, self._eref) == _lib.MR_ERR_INVALID:
            _lib._raise(self._err)
        return self._status.copy()

    def errors(self):
        """The last step's message per environment ("" when it succeeded)."""
        return [lib.mr_batch_error(self._ptr, i).decode(errors="replace")
                for i in range(self.n)]

    def _rows(self, a, width, name, names):
        if a is None:
            return None
        return as_array(a, (self.n, width), name, names)

    def get_state(self):
        """(q, v): copies of shape (n, nq) and (n, nv)."""
        q = np.empty((self.n, self.world.nq))
        v = np.empty((self.n, self.world.nv))
        lib.mr_batch_get_state(self._ptr, dptr(q), dptr(v))
        return q, v

    def set_state(self, q=None, v=None):
        """Set q (n, nq) and/or v (n, nv) (quaternions normalised). ValueError naming the
        argument, the expected and the received shape, or the first entry that is not finite;
        nothing is changed then."""
        qa = self._rows(q, self.world.nq, "q", self.world.q_names)
        va = self._rows(v, self.world.nv, "v", self.world.v_names)
        err = _Error()
        _check(lib.mr_batch_set_state(self._ptr, dptr(qa), dptr(va), ctypes.byref(err)), err)

    def get_controls(self):
        """(torque, target): copies of shape (n, nv) and (n, nq)."""
        tau = np.empty((self.n, self.world.nv))
        qt = np.empty((self.n, self.world.nq))
        lib.mr_batch_get_controls(self._ptr, dptr(tau), dptr(qt))
        return tau, qt

    def set_controls(self, torque=None, target=None):
        """Set the commanded torques (n, nv) and/or PD targets (n, nq), checked as set_state;
        nothing changes when an entry is not finite."""
        ta = self._rows(torque, self.world.nv, "torque", self.world.v_names)
        qa = self._rows(target, self.world.nq, "target", self.world.q_names)
        err = _Error()
        _check(lib.mr_batch_set_controls(self._ptr, dptr(ta), dptr(qa), ctypes.byref(err)), err)

    q = property(lambda self: readonly(self.get_state()[0]),
                 lambda self, q: self.set_state(q=q),
                 doc="every environment's q (n, nq): a read-only copy; assign to set")
    v = property(lambda self: readonly(self.get_state()[1]),
                 lambda self, v: self.set_state(v=v),
                 doc="every environment's v (n, nv): a read-only copy; assign to set")
    torque = property(lambda self: readonly(self.get_controls()[0]),
                      lambda self, t: self.set_controls(torque=t),
                      doc="commanded torques (n, nv): a read-only copy; assign to set")
    target = property(lambda self: readonly(self.get_controls()[1]),
                      lambda self, t: self.set_controls(target=t),
                      doc="PD targets (n, nq): a read-only copy; assign to set")

    def reset(self, i=None):
        """Environment i (every environment when None) back to the initial state and controls."""
        lib.mr_batch_reset(self._ptr, -1 if i is None else _lib.as_index(i, self.n,
                                                                          "environment"))
