"""moreau from Python: ctypes bindings over the shared library libmoreau.so, numpy arrays.

    import moreau
    world = moreau.World("scenes/solo_stand.yaml")    # a compiled, read-only world
    sim = moreau.Sim(world)                            # one simulator (state, controls)
    sim.target[world.coordinate("solo/FL_KFE")] = -1.4 # PD target, written in place
    sim.step(100)
    print(sim.q[:3], sim.stats["eps_abs"], len(sim.contacts()))

State and controls (q, v, torque, target, kp, kd, contact_wrenches) are numpy views of the
simulator's own memory: writing them changes what the next step uses, and reading them after a
step shows the new values without a copy. Units and frames are those of docs/api.md: SI, a
free-flyer's q = [x, y, z, qx, qy, qz, qw] and v = [linear, angular] in the base's local frame,
world-frame wrenches, poses and contact forces.

Batch(world, n, threads) steps n such simulators in parallel (one call for all of them), with
states and controls as (n, nq) and (n, nv) arrays in and out; see Batch.

The library is found through the MOREAU_LIB environment variable (a path to libmoreau.so), then
next to this package in a source tree (build/libmoreau.so), then on the system's library path.
"""

import ctypes
import ctypes.util
import os

import numpy as np

__all__ = ["World", "Sim", "Batch", "MoreauError", "library_path", "DERIVATIVE_NAMES"]


class MoreauError(RuntimeError):
    """A failed library call; the message is the library's (file, line, value)."""


class _Vec3(ctypes.Structure):
    _fields_ = [("v", ctypes.c_double * 3)]


class _Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("msg", ctypes.c_char * 512)]


class _MpcStatus(ctypes.Structure):
    """mr_mpc_status (mpc.h)"""
    _fields_ = [("fallen", ctypes.c_int), ("fall_time", ctypes.c_double),
                ("solves", ctypes.c_long), ("not_converged", ctypes.c_long),
                ("iterations", ctypes.c_int), ("kkt", ctypes.c_double),
                ("height", ctypes.c_double), ("tilt", ctypes.c_double)]


class _Info(ctypes.Structure):
    _fields_ = [("nq", ctypes.c_int), ("nv", ctypes.c_int), ("nbodies", ctypes.c_int),
                ("ngeoms", ctypes.c_int), ("nrobots", ctypes.c_int),
                ("timestep", ctypes.c_double), ("duration", ctypes.c_double)]


class _Timing(ctypes.Structure):
    _fields_ = [(k, ctypes.c_double) for k in
                ("kinematics", "collision", "dynamics", "assembly", "consistency", "solver",
                 "integration", "total")]


class _Stats(ctypes.Structure):
    _fields_ = [("ncontacts", ctypes.c_int), ("nconstraints", ctypes.c_int),
                ("iterations", ctypes.c_int), ("converged", ctypes.c_int),
                ("eps_abs", ctypes.c_double), ("penetration", ctypes.c_double),
                ("solve_us", ctypes.c_double), ("kinetic", ctypes.c_double),
                ("potential", ctypes.c_double), ("timing", _Timing)]


class _StepDerivatives(ctypes.Structure):
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


def library_path():
    """The path of the shared library these bindings load."""
    env = os.environ.get("MOREAU_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    local = os.path.join(here, "..", "..", "build", "libmoreau.so")
    if os.path.exists(local):
        return os.path.normpath(local)
    found = ctypes.util.find_library("moreau")
    if not found:
        raise OSError("libmoreau.so not found: build it (make shared), install it (make install) "
                      "or set MOREAU_LIB")
    return found


def _declare(lib):
    """Argument and result types of the functions used here."""
    P, I, D, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_char_p
    E = ctypes.POINTER(_Error)
    DP = ctypes.POINTER(ctypes.c_double)
    sigs = {
        "mr_world_load": (P, [S, E]), "mr_world_free": (None, [P]),
        "mr_world_get_info": (_Info, [P]),
        "mr_world_body_name": (S, [P, I]), "mr_world_dof_name": (S, [P, I]),
        "mr_world_geom_name": (S, [P, I]), "mr_world_robot_name": (S, [P, I]),
        "mr_world_robot_slice": (I, [P, I] + [ctypes.POINTER(I)] * 6),
        "mr_world_joint_dof": (I, [P, S]), "mr_world_dof_coordinate": (I, [P, I]),
        "mr_world_body_index": (I, [P, S]), "mr_world_robot_index": (I, [P, S]),
        "mr_sim_create": (P, [P, S, E]), "mr_sim_free": (None, [P]),
        "mr_sim_step": (I, [P, E]), "mr_sim_reset": (None, [P]),
        "mr_sim_reset_posture": (I, [P, S, S, E]),
        "mr_sim_qpos": (DP, [P]), "mr_sim_qvel": (DP, [P]),
        "mr_sim_ctrl_torque": (DP, [P]), "mr_sim_ctrl_target": (DP, [P]),
        "mr_sim_ctrl_kp": (DP, [P]), "mr_sim_ctrl_kd": (DP, [P]),
        "mr_sim_set_state": (I, [P, DP, DP, E]), "mr_sim_set_time": (None, [P, D]),
        "mr_sim_time": (D, [P]), "mr_sim_steps": (ctypes.c_long, [P]),
        "mr_sim_last": (ctypes.POINTER(_Stats), [P]),
        "mr_sim_set_joint_torque": (I, [P, I, D, E]),
        "mr_sim_set_joint_target": (I, [P, I, D, E]),
        "mr_sim_set_joint_gains": (I, [P, I, D, D, E]),
        "mr_sim_set_wrench": (I, [P, I, _Vec3, _Vec3, E]),
        "mr_sim_clear_wrenches": (None, [P]),
        "mr_sim_contact_forces": (I, [P, P, I]),
        "mr_sim_contact_wrenches": (DP, [P]), "mr_sim_body_poses": (DP, [P]),
        "mr_sim_com": (_Vec3, [P, I]), "mr_sim_energy": (D, [P]),
        "mr_sim_derivatives_create": (P, [P, E]), "mr_sim_derivatives_free": (None, [P]),
        "mr_sim_step_derivatives": (I, [P, P, E]),
        "mr_sim_derivatives_get": (ctypes.POINTER(_StepDerivatives), [P]),
        "mr_sim_set_mpc_velocity": (I, [P, S, DP, E]),
        "mr_sim_get_mpc_status": (I, [P, S, ctypes.POINTER(_MpcStatus), E]),
        "mr_batch_create": (P, [P, I, I, S, E]), "mr_batch_free": (None, [P]),
        "mr_batch_size": (I, [P]), "mr_batch_threads": (I, [P]), "mr_batch_sim": (P, [P, I]),
        "mr_batch_step": (I, [P, I, E]), "mr_batch_status": (ctypes.POINTER(I), [P]),
        "mr_batch_error": (S, [P, I]),
        "mr_batch_get_state": (None, [P, DP, DP]), "mr_batch_set_state": (I, [P, DP, DP, E]),
        "mr_batch_get_controls": (None, [P, DP, DP]),
        "mr_batch_set_controls": (I, [P, DP, DP, E]), "mr_batch_reset": (None, [P, I]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


_lib = _declare(ctypes.CDLL(library_path()))


def _check(status, err):
    if status:
        raise MoreauError(err.msg.decode(errors="replace"))


def _view(ptr, shape):
    """A numpy array over library memory (no copy)."""
    return np.ctypeslib.as_array(ptr, shape=shape)


class World:
    """A compiled world loaded from a YAML scene: read-only, shareable by several Sims."""

    def __init__(self, path):
        err = _Error()
        self._ptr = _lib.mr_world_load(os.fsencode(path), ctypes.byref(err))
        if not self._ptr:
            raise MoreauError(err.msg.decode(errors="replace"))
        info = _lib.mr_world_get_info(self._ptr)
        self.nq, self.nv, self.nbodies = info.nq, info.nv, info.nbodies
        self.timestep, self.duration = info.timestep, info.duration
        self.body_names = [_lib.mr_world_body_name(self._ptr, b).decode()
                           for b in range(info.nbodies)]
        self.dof_names = [_lib.mr_world_dof_name(self._ptr, k).decode() for k in range(info.nv)]
        self.geom_names = [_lib.mr_world_geom_name(self._ptr, g).decode()
                           for g in range(info.ngeoms)]
        self.robots = [_lib.mr_world_robot_name(self._ptr, r).decode()
                       for r in range(info.nrobots)]

    def __del__(self):
        if getattr(self, "_ptr", None):
            _lib.mr_world_free(self._ptr)
            self._ptr = None

    def dof(self, joint):
        """The velocity index of a 1-dof joint named "ROBOT/JOINT"."""
        k = _lib.mr_world_joint_dof(self._ptr, joint.encode())
        if k < 0:
            raise KeyError(f"no 1-dof joint '{joint}' (names are ROBOT/JOINT)")
        return k

    def coordinate(self, joint):
        """The configuration index of a 1-dof joint named "ROBOT/JOINT"."""
        return _lib.mr_world_dof_coordinate(self._ptr, self.dof(joint))

    def body(self, name):
        """The index of a body ("ROBOT/LINK" or a scene body)."""
        b = _lib.mr_world_body_index(self._ptr, name.encode())
        if b < 0:
            raise KeyError(f"no body '{name}'")
        return b

    def robot(self, name):
        """The robot's slices: dict(q=slice, v=slice, bodies=range)."""
        r = _lib.mr_world_robot_index(self._ptr, name.encode())
        if r < 0:
            raise KeyError(f"no robot '{name}' (robots: {', '.join(self.robots)})")
        v = [ctypes.c_int() for _ in range(6)]
        _lib.mr_world_robot_slice(self._ptr, r, *[ctypes.byref(x) for x in v])
        iq, nq, iv, nv, b0, nb = (x.value for x in v)
        return {"index": r, "q": slice(iq, iq + nq), "v": slice(iv, iv + nv),
                "bodies": range(b0, b0 + nb)}


class Sim:
    """A simulator on a World: its state, controls and per-step statistics."""

    def __init__(self, world, solver=None):
        err = _Error()
        self.world = world  # kept alive as long as the simulator
        self._ptr = _lib.mr_sim_create(world._ptr, solver.encode() if solver else None,
                                       ctypes.byref(err))
        if not self._ptr:
            raise MoreauError(err.msg.decode(errors="replace"))
        self._attach()

    @classmethod
    def _borrowed(cls, world, ptr, owner):
        """A Sim over a simulator another object owns (a Batch's environment)."""
        sim = cls.__new__(cls)
        sim.world, sim._ptr, sim._owner = world, ptr, owner
        sim._attach()
        return sim

    def _attach(self):
        nq, nv, nb = self.world.nq, self.world.nv, self.world.nbodies
        self.q = _view(_lib.mr_sim_qpos(self._ptr), (nq,))
        self.v = _view(_lib.mr_sim_qvel(self._ptr), (nv,))
        self.torque = _view(_lib.mr_sim_ctrl_torque(self._ptr), (nv,))
        self.target = _view(_lib.mr_sim_ctrl_target(self._ptr), (nq,))
        self.kp = _view(_lib.mr_sim_ctrl_kp(self._ptr), (nv,))
        self.kd = _view(_lib.mr_sim_ctrl_kd(self._ptr), (nv,))
        # per body: force (3) then moment about the body origin (3), world frame
        self.contact_wrenches = _view(_lib.mr_sim_contact_wrenches(self._ptr), (nb, 6))

    def __del__(self):
        if getattr(self, "_deriv", None):
            _lib.mr_sim_derivatives_free(self._deriv)
            self._deriv = None
        if getattr(self, "_ptr", None) and getattr(self, "_owner", None) is None:
            _lib.mr_sim_free(self._ptr)
        self._ptr = None

    def step_derivatives(self):
        """One step, and its Jacobians at the state it started from (docs/derivatives.md).

        Returns a dict of (nv, nv) arrays (copies), entry [i, k] = d(output i)/d(input k):
        dvn_dq, dvn_dv, dvn_dtau of the velocity after the step, dqn_dq, dqn_dv, dqn_dtau of
        the configuration after it (tangent space at q+); derivatives in q are along q (+) dq.
        Raises MoreauError when the step fails or its contacts are not differentiated (a point
        constraint, a contact between two moving bodies)."""
        err = _Error()
        if not getattr(self, "_deriv", None):
            self._deriv = _lib.mr_sim_derivatives_create(self._ptr, ctypes.byref(err))
            if not self._deriv:
                raise MoreauError(err.msg.decode(errors="replace"))
        _check(_lib.mr_sim_step_derivatives(self._ptr, self._deriv, ctypes.byref(err)), err)
        sd = _lib.mr_sim_derivatives_get(self._deriv).contents
        nv = self.world.nv
        return {k: _view(getattr(sd, k), (nv, nv)).copy() for k in DERIVATIVE_NAMES}

    def step(self, n=1):
        """n steps of the world's Δt; raises MoreauError on divergence."""
        err = _Error()
        for _ in range(n):
            _check(_lib.mr_sim_step(self._ptr, ctypes.byref(err)), err)

    def reset(self, robot=None, posture=None):
        """Back to the initial state and controls, or with a robot in an SRDF posture."""
        if robot is None:
            _lib.mr_sim_reset(self._ptr)
            return
        err = _Error()
        _check(_lib.mr_sim_reset_posture(self._ptr, robot.encode(), posture.encode(),
                                         ctypes.byref(err)), err)

    def set_state(self, q=None, v=None):
        """Copy q and/or v in (quaternions normalised; non-finite values refused)."""
        err = _Error()
        qa = None if q is None else np.ascontiguousarray(q, dtype=np.float64)
        va = None if v is None else np.ascontiguousarray(v, dtype=np.float64)
        as_ptr = (lambda a: None if a is None
                  else a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        _check(_lib.mr_sim_set_state(self._ptr, as_ptr(qa), as_ptr(va), ctypes.byref(err)), err)

    @property
    def time(self):
        return _lib.mr_sim_time(self._ptr)

    @time.setter
    def time(self, t):
        _lib.mr_sim_set_time(self._ptr, float(t))

    @property
    def steps(self):
        return _lib.mr_sim_steps(self._ptr)

    def _dof(self, joint):
        return self.world.dof(joint) if isinstance(joint, str) else int(joint)

    def set_torque(self, joint, tau):
        """Commanded torque of a joint (name or dof), N m or N."""
        err = _Error()
        _check(_lib.mr_sim_set_joint_torque(self._ptr, self._dof(joint), tau, ctypes.byref(err)),
               err)

    def set_target(self, joint, q):
        """PD target of a 1-dof joint (name or dof), rad or m."""
        err = _Error()
        _check(_lib.mr_sim_set_joint_target(self._ptr, self._dof(joint), q, ctypes.byref(err)),
               err)

    def set_gains(self, joint, kp, kd):
        """PD gains of a 1-dof joint (name or dof)."""
        err = _Error()
        _check(_lib.mr_sim_set_joint_gains(self._ptr, self._dof(joint), kp, kd,
                                           ctypes.byref(err)), err)

    def set_wrench(self, body, force, torque=(0.0, 0.0, 0.0)):
        """World-frame force (N) and torque (N m) at a body's origin, every step until changed."""
        err = _Error()
        b = self.world.body(body) if isinstance(body, str) else int(body)
        f, t = _Vec3((ctypes.c_double * 3)(*force)), _Vec3((ctypes.c_double * 3)(*torque))
        _check(_lib.mr_sim_set_wrench(self._ptr, b, f, t, ctypes.byref(err)), err)

    def clear_wrenches(self):
        _lib.mr_sim_clear_wrenches(self._ptr)

    def set_mpc_velocity(self, robot, velocity):
        """Command of a robot's MPC controller (docs/mpc.md): (vx, vy) in m/s in the heading
        frame and the yaw rate in rad/s, from the next step."""
        err = _Error()
        v = (ctypes.c_double * 3)(*velocity)
        _check(_lib.mr_sim_set_mpc_velocity(self._ptr, robot.encode(), v, ctypes.byref(err)),
               err)

    def mpc_status(self, robot):
        """A robot's MPC controller status: fallen, fall_time, solves, not_converged,
        iterations, kkt (of the last solve), height, tilt."""
        err, st = _Error(), _MpcStatus()
        _check(_lib.mr_sim_get_mpc_status(self._ptr, robot.encode(), ctypes.byref(st),
                                          ctypes.byref(err)), err)
        return {k: getattr(st, k) for k, _ in _MpcStatus._fields_}

    def contacts(self):
        """The last step's contacts as a structured array (CONTACT_DTYPE), a copy."""
        n = _lib.mr_sim_contact_forces(self._ptr, None, 0)
        out = np.zeros(n, dtype=CONTACT_DTYPE)
        if n:
            _lib.mr_sim_contact_forces(self._ptr, out.ctypes.data, n)
        return out

    def body_poses(self):
        """World placements at the current state: (R [nbodies, 3, 3], p [nbodies, 3]), copies."""
        X = _view(_lib.mr_sim_body_poses(self._ptr), (self.world.nbodies, 12))
        return X[:, :9].reshape(-1, 3, 3).copy(), X[:, 9:].copy()

    def com(self, robot=None):
        """Centre of mass (world frame, m) of a robot, or of every body."""
        r = -1 if robot is None else self.world.robot(robot)["index"]
        return np.array(_lib.mr_sim_com(self._ptr, r).v)

    @property
    def stats(self):
        """The last step's figures: contacts, solver iterations and criteria, energies, times."""
        s = _lib.mr_sim_last(self._ptr).contents
        d = {k: getattr(s, k) for k, _ in _Stats._fields_ if k != "timing"}
        d["timing"] = {k: getattr(s.timing, k) for k, _ in _Timing._fields_}
        return d

    def energy(self):
        """Kinetic plus potential energy of the current state (J)."""
        return _lib.mr_sim_energy(self._ptr)


def _dptr(a):
    return None if a is None else a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


class Batch:
    """n simulators on one World stepped in parallel by a fixed pool of threads (batch.h).

        batch = moreau.Batch(world, 16, threads=2)
        target = batch.target                  # (n, nq) copy of the PD targets
        target[:, world.coordinate("solo/FL_KFE")] += actions
        batch.set_controls(target=target)
        status = batch.step(10)                # (n,) statuses, 0 = ok
        q, v = batch.q, batch.v                # (n, nq), (n, nv) copies

    Results are bit for bit those of n Sims stepped one by one, whatever the thread count. A
    diverging environment gets a non-zero status (its message in errors()) and stops for the
    rest of that call; the others go on. sim(i) is environment i as a Sim (views, per-joint
    setters, read-outs)."""

    def __init__(self, world, n, threads=1, solver=None):
        err = _Error()
        self.world = world  # kept alive as long as the batch
        self._ptr = _lib.mr_batch_create(world._ptr, int(n), int(threads),
                                         solver.encode() if solver else None, ctypes.byref(err))
        if not self._ptr:
            raise MoreauError(err.msg.decode(errors="replace"))
        self.n, self.threads = _lib.mr_batch_size(self._ptr), _lib.mr_batch_threads(self._ptr)
        self._status = _view(_lib.mr_batch_status(self._ptr), (self.n,))

    def __del__(self):
        if getattr(self, "_ptr", None):
            _lib.mr_batch_free(self._ptr)
            self._ptr = None

    def __len__(self):
        return self.n

    def sim(self, i):
        """Environment i as a Sim (its memory is the batch's; valid while the batch lives)."""
        if not 0 <= i < self.n:
            raise IndexError(f"environment {i} out of range [0, {self.n})")
        return Sim._borrowed(self.world, _lib.mr_batch_sim(self._ptr, i), self)

    def step(self, nsteps=1):
        """nsteps steps of every environment; returns the (n,) statuses (0 = ok), a copy."""
        if nsteps < 0:
            raise ValueError(f"nsteps = {nsteps} is negative")
        err = _Error()
        _lib.mr_batch_step(self._ptr, int(nsteps), ctypes.byref(err))
        return self._status.copy()

    def errors(self):
        """The last step's message per environment ("" when it succeeded)."""
        return [_lib.mr_batch_error(self._ptr, i).decode(errors="replace")
                for i in range(self.n)]

    def _rows(self, a, width, name):
        if a is None:
            return None
        a = np.ascontiguousarray(a, dtype=np.float64)
        if a.shape != (self.n, width):
            raise ValueError(f"{name}: shape {a.shape}, expected ({self.n}, {width})")
        return a

    def get_state(self):
        """(q, v): copies of shape (n, nq) and (n, nv)."""
        q = np.empty((self.n, self.world.nq))
        v = np.empty((self.n, self.world.nv))
        _lib.mr_batch_get_state(self._ptr, _dptr(q), _dptr(v))
        return q, v

    def set_state(self, q=None, v=None):
        """Set q (n, nq) and/or v (n, nv) (quaternions normalised; non-finite values refused)."""
        qa, va = self._rows(q, self.world.nq, "q"), self._rows(v, self.world.nv, "v")
        err = _Error()
        _check(_lib.mr_batch_set_state(self._ptr, _dptr(qa), _dptr(va), ctypes.byref(err)), err)

    def get_controls(self):
        """(torque, target): copies of shape (n, nv) and (n, nq)."""
        tau = np.empty((self.n, self.world.nv))
        qt = np.empty((self.n, self.world.nq))
        _lib.mr_batch_get_controls(self._ptr, _dptr(tau), _dptr(qt))
        return tau, qt

    def set_controls(self, torque=None, target=None):
        """Set the commanded torques (n, nv) and/or PD targets (n, nq); nothing changes when an
        entry is not finite."""
        ta = self._rows(torque, self.world.nv, "torque")
        qa = self._rows(target, self.world.nq, "target")
        err = _Error()
        _check(_lib.mr_batch_set_controls(self._ptr, _dptr(ta), _dptr(qa), ctypes.byref(err)),
               err)

    q = property(lambda self: self.get_state()[0], lambda self, q: self.set_state(q=q))
    v = property(lambda self: self.get_state()[1], lambda self, v: self.set_state(v=v))
    torque = property(lambda self: self.get_controls()[0],
                      lambda self, t: self.set_controls(torque=t))
    target = property(lambda self: self.get_controls()[1],
                      lambda self, t: self.set_controls(target=t))

    def reset(self, i=None):
        """Environment i (every environment when None) back to the initial state and controls."""
        _lib.mr_batch_reset(self._ptr, -1 if i is None else int(i))


# ---- actuators and keyframes of MJCF models (docs/mjcf.md) ----------------------------------
# Kept apart from the classes above: World.actuator_names, Sim.set_ctrl, Sim.reset_keyframe.

def _declare_actuators(lib):
    P, I, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
    E, DP = ctypes.POINTER(_Error), ctypes.POINTER(ctypes.c_double)
    for name, res, args in (("mr_world_actuator_count", I, [P]),
                            ("mr_world_actuator_name", S, [P, I]),
                            ("mr_sim_set_ctrl", I, [P, DP, E]),
                            ("mr_sim_reset_keyframe", I, [P, S, E])):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args


_declare_actuators(_lib)


def _actuator_names(world):
    """The world's actuators ("ROBOT/NAME"), in the order of Sim.set_ctrl's controls."""
    n = _lib.mr_world_actuator_count(world._ptr)
    return [_lib.mr_world_actuator_name(world._ptr, a).decode() for a in range(n)]


def _set_ctrl(self, ctrl):
    """Set one control per actuator (World.actuator_names' order): motors' torques, servos'
    targets, clamped to their ctrlrange, effective from the next step."""
    nu = len(self.world.actuator_names)
    a = np.ascontiguousarray(ctrl, dtype=np.float64)
    if a.shape != (nu,):
        raise ValueError(f"ctrl: expected shape ({nu},) (one per actuator), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("ctrl: every control must be finite")
    err = _Error()
    _check(_lib.mr_sim_set_ctrl(self._ptr, a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                                ctypes.byref(err)), err)


def _reset_keyframe(self, name):
    """Reset, then start from the keyframe "ROBOT/NAME" (its state, time and controls)."""
    if not isinstance(name, str):
        raise TypeError(f"name: expected a str, got {type(name).__name__}")
    err = _Error()
    _check(_lib.mr_sim_reset_keyframe(self._ptr, name.encode(), ctypes.byref(err)), err)


World.actuator_names = property(_actuator_names)
Sim.set_ctrl = _set_ctrl
Sim.reset_keyframe = _reset_keyframe
