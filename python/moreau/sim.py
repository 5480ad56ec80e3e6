"""One simulator on a World: its state and controls as checked numpy views, named access to
joints and bodies, per-step figures, and the world's dynamics at the current state."""

import ctypes

import numpy as np

from . import _lib
from ._lib import (_Error, _Vec3, _check, as_array, as_count, as_name, as_scalar, dptr, lib,
                   readonly, view)
from .world import Pose, World


class _MpcStatus(ctypes.Structure):
    """mr_mpc_status (mpc.h)"""
    _fields_ = [("fallen", ctypes.c_int), ("fall_time", ctypes.c_double),
                ("solves", ctypes.c_long), ("not_converged", ctypes.c_long),
                ("iterations", ctypes.c_int), ("max_iterations", ctypes.c_int),
                ("kkt", ctypes.c_double),
                ("height", ctypes.c_double), ("tilt", ctypes.c_double),
                ("qp_time", ctypes.c_double)]


class _ContactIdInfo(ctypes.Structure):
    """mr_contact_id_info (inverse.h)"""
    _fields_ = [("residual", ctypes.c_double), ("iterations", ctypes.c_int),
                ("converged", ctypes.c_int)]


class _Timing(ctypes.Structure):
    _fields_ = [(k, ctypes.c_double) for k in
                ("kinematics", "collision", "dynamics", "assembly", "consistency", "solver",
                 "integration", "total")]


class _Stats(ctypes.Structure):
    """mr_step_stats (sim.h)"""
    _fields_ = [("ncontacts", ctypes.c_int), ("nconstraints", ctypes.c_int),
                ("iterations", ctypes.c_int), ("converged", ctypes.c_int),
                ("eps_abs", ctypes.c_double), ("penetration", ctypes.c_double),
                ("solve_us", ctypes.c_double), ("kinetic", ctypes.c_double),
                ("potential", ctypes.c_double), ("timing", _Timing),
                ("islands", ctypes.c_int), ("iterations_sum", ctypes.c_int)]


class _StepDerivatives(ctypes.Structure):
    """mr_step_derivatives (sim_derivatives.h)"""
    _fields_ = [("nv", ctypes.c_int)] + [
        (k, ctypes.POINTER(ctypes.c_double)) for k in
        ("dvn_dq", "dvn_dv", "dvn_dtau", "dqn_dq", "dqn_dv", "dqn_dtau")] + [
        ("rbd", ctypes.c_void_p), ("work", ctypes.POINTER(ctypes.c_double))]


# the Jacobians of a step (mr_sim_step_derivatives), in the order of the struct
DERIVATIVE_NAMES = ("dvn_dq", "dvn_dv", "dvn_dtau", "dqn_dq", "dqn_dv", "dqn_dtau")

# one contact of the last step (mr_contact_force, control.h)
CONTACT_DTYPE = np.dtype([("geom", np.int32, 2), ("body", np.int32, 2), ("point", np.float64, 3),
                          ("normal", np.float64, 3), ("phi", np.float64),
                          ("force_local", np.float64, 3), ("force", np.float64, 3)], align=True)

_step_n = lib.mr_sim_step_n
lib.mr_sim_last.restype = ctypes.POINTER(_Stats)
lib.mr_sim_last.argtypes = [ctypes.c_void_p]
lib.mr_sim_derivatives_get.restype = ctypes.POINTER(_StepDerivatives)
lib.mr_sim_derivatives_get.argtypes = [ctypes.c_void_p]


def _state_property(attr, doc):
    """A view property: reading gives the simulator's own array (no copy, always current);
    assigning writes into it with the checks of the matching setter, never rebinding it."""

    def get(self):
        return getattr(self, attr)

    def put(self, value):
        self._write(attr[1:], value)

    return property(get, put, doc=doc)


class Sim:
    """A simulator on a World: its state, controls and per-step statistics.

        sim = moreau.Sim(world)                  # solver=None: the scene's
        sim.joint("solo/FL_KFE").target[:] = -1.4
        sim.step(100)                            # 100 steps of the world's dt
        sim.body("solo/base_link").pose          # Pose at the current state
        M = sim.mass_matrix()                    # the world's dynamics at sim.q, sim.v

    q (nq,), v (nv,), torque (nv,), target (nq,), kp, kd (nv,) are numpy views of the
    simulator's own memory: write entries in place (sim.q[2] = 0.3) or assign a whole array
    (sim.q = x: the same as set_state(q=x), checked and copied in; never a rebinding). What is
    written between two steps is what the next step uses; step() checks it first (a NaN written
    in place is an InvalidInputError naming the entry before anything is stepped).
    contact_wrenches (nbodies, 6) is the last step's contact wrench on each body (force, then
    moment about the body origin, world frame), read-only. Units SI; a free-flyer's q is
    [x, y, z, qx, qy, qz, qw], its v [linear, angular] in the base's local frame (docs/api.md)."""

    __slots__ = ("world", "_ptr", "_owner", "_q", "_v", "_torque", "_target", "_kp", "_kd",
                 "_contact_wrenches", "_deriv", "_recorders", "_err", "_eref", "_uses",
                 "__weakref__")

    def __init__(self, world, solver=None):
        if not isinstance(world, World):
            raise TypeError(f"world: expected a moreau.World, got {type(world).__name__}")
        if solver is not None:
            as_name(solver, "solver")
        err = _Error()
        self.world = world  # kept alive as long as the simulator
        self._owner, self._uses = None, None
        self._ptr = lib.mr_sim_create(world._ptr, solver.encode() if solver else None,
                                      ctypes.byref(err))
        if not self._ptr:
            _lib._raise(err)
        self._uses = world._handle  # the world stays allocated until this simulator is freed
        self._uses.acquire()
        self._attach()

    @classmethod
    def _borrowed(cls, world, ptr, owner):
        """A Sim over a simulator another object owns (a Batch's environment)."""
        sim = cls.__new__(cls)
        sim.world, sim._ptr, sim._owner, sim._uses = world, ptr, owner, None
        sim._attach()
        return sim

    def _attach(self):
        nq, nv, nb = self.world.nq, self.world.nv, self.world.nbodies
        self._q = view(lib.mr_sim_qpos(self._ptr), (nq,))
        self._v = view(lib.mr_sim_qvel(self._ptr), (nv,))
        self._torque = view(lib.mr_sim_ctrl_torque(self._ptr), (nv,))
        self._target = view(lib.mr_sim_ctrl_target(self._ptr), (nq,))
        self._kp = view(lib.mr_sim_ctrl_kp(self._ptr), (nv,))
        self._kd = view(lib.mr_sim_ctrl_kd(self._ptr), (nv,))
        self._contact_wrenches = readonly(view(lib.mr_sim_contact_wrenches(self._ptr), (nb, 6)))
        self._deriv = None
        self._recorders = []
        # the step's error, kept (a simulator is used by one thread at a time)
        self._err = _Error()
        self._eref = ctypes.byref(self._err)

    def __del__(self):
        if getattr(self, "_deriv", None):
            lib.mr_sim_derivatives_free(self._deriv)
            self._deriv = None
        if getattr(self, "_ptr", None) and getattr(self, "_owner", None) is None:
            lib.mr_sim_free(self._ptr)
        self._ptr = None
        if getattr(self, "_uses", None) is not None:
            self._uses.release()
            self._uses = None

    def __repr__(self):
        return (f"<moreau.Sim on {self.world!r}: t {self.time:g} s, {self.steps} steps, "
                f"{self.stats['ncontacts']} contacts>")

    # ---- state and controls: checked views ----

    q = _state_property("_q", "configuration (nq,), a view: [x, y, z, qx, qy, qz, qw] per "
                              "free-flyer, one angle or length per 1-dof joint")
    v = _state_property("_v", "velocity (nv,), a view: [linear, angular] per free-flyer in its "
                              "local frame, one rate per 1-dof joint")
    torque = _state_property("_torque", "commanded torques τ_cmd (nv,), a view (N m or N)")
    target = _state_property("_target", "PD targets q_t (nq,), a view (rad or m; only the "
                                        "1-dof joints' entries are used)")
    kp = _state_property("_kp", "PD stiffness (nv,), a view (N m/rad or N/m; >= 0, 1-dof joints "
                                "only)")
    kd = _state_property("_kd", "PD damping (nv,), a view (N m s/rad or N s/m; >= 0, 1-dof "
                                "joints only)")

    @property
    def contact_wrenches(self):
        """The last step's contact wrench on every body (nbodies, 6): force (N), then moment
        about the body's origin (N m), world frame. A read-only view."""
        return self._contact_wrenches

    def _names(self, which):
        return self.world.q_names if which in ("q", "target") else self.world.v_names

    def _write(self, which, value, sl=slice(None), label=None):
        """Checked assignment of a whole array (or a joint's slice of it)."""
        dest = getattr(self, "_" + which)
        n = len(range(*sl.indices(len(dest))))
        names = self._names(which)[sl]
        a = as_array(value, (n,), label or which, names)
        if which in ("kp", "kd"):
            self._check_gains(label or which, a, sl)
        if which == "q":
            full = self._q.copy()
            full[sl] = a
            err = _Error()
            _check(lib.mr_sim_set_state(self._ptr, dptr(full), None, ctypes.byref(err)), err)
            return
        dest[sl] = a

    def _check_gains(self, which, a, sl):
        dofs = range(self.world.nv)[sl]
        for k, x in enumerate(a):
            name = self.world.v_names[dofs[k]]
            if x < 0:
                raise ValueError(f"{which}[{k}] = {x} is negative ({name})")
            j = self.world.joint(self.world.dof_names[dofs[k]])
            if x != 0 and j.dof is None:
                raise ValueError(f"{which}[{k}] = {x}: {name} is a dof of a {j.type} joint; "
                                 "gains act on 1-dof joints only (use torque)")

    def set_state(self, q=None, v=None):
        """Copy q (nq,) and/or v (nv,) in; quaternions are normalised. ValueError naming the
        argument for a wrong shape or a non-finite entry, InvalidInputError for a zero
        quaternion."""
        qa = None if q is None else as_array(q, (self.world.nq,), "q", self.world.q_names)
        va = None if v is None else as_array(v, (self.world.nv,), "v", self.world.v_names)
        err = _Error()
        _check(lib.mr_sim_set_state(self._ptr, dptr(qa), dptr(va), ctypes.byref(err)), err)

    @property
    def time(self):
        """The simulated time (s); assignable (the world's forces and pd.sine targets are
        functions of it)."""
        return lib.mr_sim_time(self._ptr)

    @time.setter
    def time(self, t):
        lib.mr_sim_set_time(self._ptr, as_scalar(t, "time"))

    @property
    def steps(self):
        """Steps done since creation or the last reset."""
        return lib.mr_sim_steps(self._ptr)

    # ---- stepping ----

    def step(self, n=1):
        """n steps (an int >= 0) of the world's Δt. The inputs written in place (q, v, torque,
        target, kp, kd) are checked first: InvalidInputError (a ValueError) naming the entry,
        nothing stepped. MoreauError when a step diverges (the state is left as before that
        step). TypeError for an n that is not an integer, ValueError for n < 0."""
        if type(n) is not int or n < 0:  # the common case checked first: a plain int
            n = as_count(n, "n")
        if not self._recorders:
            if _step_n(self._ptr, n, self._eref):
                _lib._raise(self._err)
            return
        for _ in range(n):
            if _step_n(self._ptr, 1, self._eref):
                _lib._raise(self._err)
            for r in self._recorders:
                r._capture(self)

    def step_derivatives(self):
        """One step, and its Jacobians at the state it started from (docs/derivatives.md).

        Returns a dict of (nv, nv) arrays (copies), entry [i, k] = d(output i)/d(input k):
        dvn_dq, dvn_dv, dvn_dtau of the velocity after the step, dqn_dq, dqn_dv, dqn_dtau of
        the configuration after it (tangent space at q+); derivatives in q are along q (+) dq.
        Raises MoreauError when the step fails or its contacts are not differentiated (a point
        constraint, a contact between two moving bodies)."""
        err = _Error()
        _check(lib.mr_sim_check_inputs(self._ptr, ctypes.byref(err)), err)
        if not self._deriv:
            self._deriv = lib.mr_sim_derivatives_create(self._ptr, ctypes.byref(err))
            if not self._deriv:
                _lib._raise(err)
        _check(lib.mr_sim_step_derivatives(self._ptr, self._deriv, ctypes.byref(err)), err)
        sd = lib.mr_sim_derivatives_get(self._deriv).contents
        nv = self.world.nv
        out = {k: view(getattr(sd, k), (nv, nv)).copy() for k in DERIVATIVE_NAMES}
        for r in self._recorders:
            r._capture(self)
        return out

    def reset(self, robot=None, posture=None):
        """Back to the initial state and controls (time 0, no wrench), or with a robot in an
        SRDF posture (both names given)."""
        if robot is None and posture is None:
            lib.mr_sim_reset(self._ptr)
            return
        if robot is None or posture is None:
            raise TypeError("reset: give both robot and posture, or neither")
        err = _Error()
        _check(lib.mr_sim_reset_posture(self._ptr, as_name(robot, "robot").encode(),
                                        as_name(posture, "posture").encode(),
                                        ctypes.byref(err)), err)

    # ---- per joint and per body ----

    def _dof(self, joint):
        if isinstance(joint, str):
            return self.world.dof(joint)
        return _lib.as_index(joint, self.world.nv, "dof")

    def set_torque(self, joint, tau):
        """Commanded torque of a joint (name or dof index), N m or N."""
        err = _Error()
        _check(lib.mr_sim_set_joint_torque(self._ptr, self._dof(joint), as_scalar(tau, "tau"),
                                           ctypes.byref(err)), err)

    def set_target(self, joint, q):
        """PD target of a 1-dof joint (name or dof index), rad or m."""
        err = _Error()
        _check(lib.mr_sim_set_joint_target(self._ptr, self._dof(joint), as_scalar(q, "q"),
                                           ctypes.byref(err)), err)

    def set_gains(self, joint, kp, kd):
        """PD gains of a 1-dof joint (name or dof index), >= 0."""
        err = _Error()
        _check(lib.mr_sim_set_joint_gains(self._ptr, self._dof(joint),
                                          as_scalar(kp, "kp", nonnegative=True),
                                          as_scalar(kd, "kd", nonnegative=True),
                                          ctypes.byref(err)), err)

    def _body(self, body):
        b = self.world.body(body).index
        if b == 0:
            raise ValueError(f"body '{self.world.body_names[0]}' is the world body (index 0): "
                             "it does not move")
        return b

    def set_wrench(self, body, force, torque=(0.0, 0.0, 0.0)):
        """World-frame force (3,) in N and torque (3,) in N m at a body's origin (body by name,
        BodyInfo or index), applied every step until changed."""
        b = self._body(body)
        f, t = as_array(force, (3,), "force"), as_array(torque, (3,), "torque")
        err = _Error()
        _check(lib.mr_sim_set_wrench(self._ptr, b, _Vec3((ctypes.c_double * 3)(*f)),
                                     _Vec3((ctypes.c_double * 3)(*t)), ctypes.byref(err)), err)

    def get_wrench(self, body):
        """The wrench set on a body: (force (3,), torque (3,)), world frame, N and N m."""
        b = self._body(body)
        f, t, err = _Vec3(), _Vec3(), _Error()
        _check(lib.mr_sim_get_wrench(self._ptr, b, ctypes.byref(f), ctypes.byref(t),
                                     ctypes.byref(err)), err)
        return np.array(f.v), np.array(t.v)

    def clear_wrenches(self):
        """Remove every wrench set with set_wrench."""
        lib.mr_sim_clear_wrenches(self._ptr)

    def joint(self, name):
        """Named access to a joint's entries of q, v, torque, target, kp, kd, as views
        (JointView). KeyError with the closest names for an unknown joint."""
        return JointView(self, self.world.joint(name))

    def body(self, name):
        """Named access to a body: pose, velocity, wrench, contact_wrench (BodyView)."""
        return BodyView(self, self.world.body(name))

    # ---- MPC ----

    def set_mpc_velocity(self, robot, velocity):
        """Command of a robot's MPC controller (docs/mpc.md): (vx, vy) in m/s in the heading
        frame and the yaw rate in rad/s, from the next step."""
        err = _Error()
        v = as_array(velocity, (3,), "velocity", finite=False)
        _check(lib.mr_sim_set_mpc_velocity(self._ptr, as_name(robot, "robot").encode(), dptr(v),
                                           ctypes.byref(err)), err)

    def mpc_status(self, robot):
        """A robot's MPC controller status: fallen, fall_time, solves, not_converged,
        iterations (of the last solve), max_iterations (of a solve since the reset), kkt (of the
        last solve), height, tilt, qp_time (the last solve's thread CPU time, s)."""
        err, st = _Error(), _MpcStatus()
        _check(lib.mr_sim_get_mpc_status(self._ptr, as_name(robot, "robot").encode(),
                                         ctypes.byref(st), ctypes.byref(err)), err)
        return {k: getattr(st, k) for k, _ in _MpcStatus._fields_}

    # ---- read-outs ----

    def contacts(self):
        """The last step's contacts as a structured array (CONTACT_DTYPE: geom, body, point,
        normal, phi, force_local (t1, t2, n), force (world)), a copy."""
        n = lib.mr_sim_contact_forces(self._ptr, None, 0)
        out = np.zeros(n, dtype=CONTACT_DTYPE)
        if n:
            lib.mr_sim_contact_forces(self._ptr, out.ctypes.data, n)
        return out

    def body_poses(self):
        """World placements at the current state: (R [nbodies, 3, 3], p [nbodies, 3]), copies."""
        X = view(lib.mr_sim_body_poses(self._ptr), (self.world.nbodies, 12))
        return X[:, :9].reshape(-1, 3, 3).copy(), X[:, 9:].copy()

    def com(self, robot=None):
        """Centre of mass (world frame, m) of a robot, or of every body."""
        r = -1 if robot is None else self.world.robot(robot)["index"]
        return np.array(lib.mr_sim_com(self._ptr, r).v)

    @property
    def stats(self):
        """The last step's figures: ncontacts, nconstraints, iterations, converged, eps_abs (N),
        penetration (m), solve_us, kinetic and potential energy (J), islands, iterations_sum and
        the stage times (µs) under timing (0 unless time_stages() is on)."""
        s = lib.mr_sim_last(self._ptr).contents
        d = {k: getattr(s, k) for k, _ in _Stats._fields_ if k != "timing"}
        d["timing"] = {k: getattr(s.timing, k) for k, _ in _Timing._fields_}
        return d

    def time_stages(self, on=True):
        """Measure the wall time of each stage of the following steps into stats["timing"] (on)
        or not (off, the default: the clock reads cost 8 % of a step of 100 resting spheres).
        The steps are the same either way."""
        lib.mr_sim_time_stages(self._ptr, 1 if on else 0)

    def energy(self):
        """Kinetic plus potential energy of the current state (J)."""
        return lib.mr_sim_energy(self._ptr)

    # ---- the world's dynamics at the current state ----

    def mass_matrix(self):
        """world.mass_matrix(sim.q)"""
        return self.world.mass_matrix(self._q)

    def bias(self):
        """world.bias(sim.q, sim.v)"""
        return self.world.bias(self._q, self._v)

    def gravity(self):
        """world.gravity(sim.q)"""
        return self.world.gravity(self._q)

    def rnea(self, a):
        """world.rnea(sim.q, sim.v, a)"""
        return self.world.rnea(self._q, self._v, a)

    def aba(self, tau):
        """world.aba(sim.q, sim.v, tau)"""
        return self.world.aba(self._q, self._v, tau)

    def contact_inverse(self, a, f_ref=None):
        """Contact inverse dynamics at the current state on the last step's contacts
        (docs/inverse.md): the generalised forces and contact forces that realise the
        acceleration a (nv,), the floating bases balanced by the contacts alone, each force in
        its friction cone, closest to f_ref ((ncontacts, 3), contact frames (t1, t2, n), None
        for the smallest). A dict: tau (nv,), forces (ncontacts, 3), residual (what the contacts
        could not supply on an unactuated dof, 0 when a is feasible), converged, iterations."""
        aa = self.world._v(a, "a")
        contacts, lam = ctypes.c_void_p(), ctypes.POINTER(ctypes.c_double)()
        nc = lib.mr_sim_contacts(self._ptr, ctypes.byref(contacts), ctypes.byref(lam))
        ref = None if f_ref is None else as_array(f_ref, (nc, 3), "f_ref")
        err, info = _Error(), _ContactIdInfo()
        w = lib.mr_contact_id_create(self.world._model, nc, ctypes.byref(err))
        if not w:
            _check(err.status or 1, err)
        d = lib.mr_data_create(self.world._model)
        tau, f = np.empty(self.world.nv), np.empty((nc, 3))
        try:
            _check(lib.mr_contact_id_solve(w, d, dptr(self._q), dptr(self._v), dptr(aa), contacts,
                                           nc, dptr(ref) if ref is not None else None, None,
                                           dptr(tau), dptr(f), ctypes.byref(info),
                                           ctypes.byref(err)), err)
        finally:
            lib.mr_data_free(d)
            lib.mr_contact_id_free(w)
        return {"tau": tau, "forces": f, "residual": info.residual,
                "converged": bool(info.converged), "iterations": info.iterations}

    def placement(self, name):
        """world.placement(name, sim.q)"""
        return self.world.placement(name, self._q)

    def jacobian(self, name, frame="world"):
        """world.jacobian(name, sim.q, frame)"""
        return self.world.jacobian(name, self._q, frame)

    def velocity(self, name, frame="local_world_aligned"):
        """world.velocity(name, sim.q, sim.v, frame)"""
        return self.world.velocity(name, self._q, self._v, frame)

    def com_jacobian(self, robot=None):
        """world.com_jacobian(sim.q, robot)"""
        return self.world.com_jacobian(self._q, robot)

    def kinetic_energy(self):
        """world.kinetic_energy(sim.q, sim.v)"""
        return self.world.kinetic_energy(self._q, self._v)

    def potential_energy(self):
        """world.potential_energy(sim.q)"""
        return self.world.potential_energy(self._q)

    # ---- recording ----

    def record(self, every=None, contacts=None, **columns):
        """Start recording this simulator's steps: returns a Recorder (moreau.Recorder) that
        keeps one row per `every` steps (default: the scene's record.every) and, when contacts
        is true (default: the scene's record.contact_forces), the contacts; save it with
        write_csv / write_html. Optional column groups as in the scene's record block:
        energy, solver_stats, world_velocity, poses, com. stop() ends the recording."""
        from .record import Recorder
        return Recorder(self, every=every, contacts=contacts, **columns)


class JointView:
    """A joint of a simulator (sim.joint(name)): q, v (its coordinates), torque, kp, kd (its
    dofs) and target (its coordinates) are views of the simulator's arrays: write them in place
    (j.target[0] = -1.4) or assign (j.target = -1.4, checked, copied in). info is the world's
    JointInfo (type, limits, indices, names)."""
    __slots__ = ("_sim", "info")

    def __init__(self, sim, info):
        self._sim, self.info = sim, info

    @property
    def name(self):
        """the joint's name ("ROBOT/JOINT")"""
        return self.info.name

    @property
    def type(self):
        """the joint's type: revolute, continuous, prismatic, spherical or free"""
        return self.info.type

    def _get(self, which):
        sl = self.info.q if which in ("q", "target") else self.info.v
        return getattr(self._sim, "_" + which)[sl]

    def _put(self, which, value):
        sl = self.info.q if which in ("q", "target") else self.info.v
        if np.ndim(value) == 0 and sl.stop - sl.start == 1:
            value = [value]
        self._sim._write(which, value, sl, f"{which} of joint '{self.info.name}'")

    q = property(lambda s: s._get("q"), lambda s, x: s._put("q", x),
                 doc="the joint's coordinates (nq,), a view of sim.q")
    v = property(lambda s: s._get("v"), lambda s, x: s._put("v", x),
                 doc="the joint's dofs' velocities (nv,), a view of sim.v")
    torque = property(lambda s: s._get("torque"), lambda s, x: s._put("torque", x),
                      doc="commanded torques (nv,), a view of sim.torque")
    target = property(lambda s: s._get("target"), lambda s, x: s._put("target", x),
                      doc="PD targets (nq,), a view of sim.target")
    kp = property(lambda s: s._get("kp"), lambda s, x: s._put("kp", x),
                  doc="PD stiffness (nv,), a view of sim.kp")
    kd = property(lambda s: s._get("kd"), lambda s, x: s._put("kd", x),
                  doc="PD damping (nv,), a view of sim.kd")

    def __repr__(self):
        q = np.array2string(self.q, precision=4, separator=", ")
        return f"<moreau.JointView '{self.name}' ({self.type}): q {q}>"


class BodyView:
    """A body of a simulator (sim.body(name)) at its current state. pose (a Pose), position,
    rotation and quaternion of its frame in the world; velocity (6,): the world velocity of its
    origin and its angular velocity, world axes (sim.velocity(body) for other frames); wrench:
    the user wrench set on it (force, torque at its origin, world frame; assign a (6,) array or
    use sim.set_wrench); contact_wrench (6,): the last step's contact wrench on it, a read-only
    view. info is the world's BodyInfo (mass, inertia, centre of mass)."""
    __slots__ = ("_sim", "info")

    def __init__(self, sim, info):
        self._sim, self.info = sim, info

    @property
    def name(self):
        """the body's name ("ROBOT/LINK", or a scene body's)"""
        return self.info.name

    def __index__(self):
        return self.info.index

    @property
    def pose(self):
        """Pose of the body frame in the world at the current state (copies)."""
        X = view(lib.mr_sim_body_poses(self._sim._ptr), (self._sim.world.nbodies, 12))
        return Pose._flat(X[self.info.index])

    @property
    def position(self):
        """the world position (3,) of the body origin (m), at the current state"""
        return self.pose.position

    @property
    def rotation(self):
        """the body frame's rotation (3, 3) in the world, at the current state"""
        return self.pose.rotation

    @property
    def quaternion(self):
        """the body frame's orientation (x, y, z, w), w >= 0, at the current state"""
        return self.pose.quaternion

    @property
    def velocity(self):
        """(6,): world velocity of the body origin (m/s) and angular velocity (rad/s), world
        axes."""
        return readonly(self._sim.velocity(self.info, "local_world_aligned"))

    @property
    def com(self):
        """The body's centre of mass in the world frame (m)."""
        p = self.pose
        return p.rotation @ self.info.com + p.position

    @property
    def wrench(self):
        """The user wrench (6,): force (N) then torque (N m) at the body origin, world frame; a
        read-only copy, assign a (6,) array to change it."""
        f, t = self._sim.get_wrench(self.info)
        return readonly(np.concatenate([f, t]))

    @wrench.setter
    def wrench(self, w):
        a = as_array(w, (6,), f"wrench of body '{self.name}'")
        self._sim.set_wrench(self.info, a[:3], a[3:])

    @property
    def contact_wrench(self):
        """The last step's contact wrench (6,): force then moment about the body origin, world
        frame; a read-only view."""
        return self._sim.contact_wrenches[self.info.index]

    def jacobian(self, frame="world"):
        """sim.jacobian(body, frame)"""
        return self._sim.jacobian(self.info, frame)

    def __repr__(self):
        p = np.array2string(self.position, precision=4, separator=", ")
        return f"<moreau.BodyView '{self.name}': position {p}>"

