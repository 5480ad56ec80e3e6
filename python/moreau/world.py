"""The compiled world: names, the model's joints, bodies, frames and geometries, and its rigid-body
dynamics as pure functions of a state (Pinocchio-style)."""

import ctypes
import json
import os
import threading

import numpy as np

from . import _lib
from ._lib import (MoreauError, _Error, _check, as_array, as_name, dptr, lib, readonly,
                   unknown)

# frames of Jacobians and velocities (dynamics.h's mr_reference)
_REFERENCES = {"world": 0, "local": 1, "local_world_aligned": 2, "world_aligned": 2}


class _BodyInfo(ctypes.Structure):
    """mr_body_info (query.h)"""
    _fields_ = [("parent", ctypes.c_int), ("joint_type", ctypes.c_int),
                ("idx_q", ctypes.c_int), ("nq", ctypes.c_int),
                ("idx_v", ctypes.c_int), ("nv", ctypes.c_int),
                ("axis", ctypes.c_double * 3), ("placement", ctypes.c_double * 12),
                ("mass", ctypes.c_double), ("com", ctypes.c_double * 3),
                ("inertia", ctypes.c_double * 9)]


class _GeomInfo(ctypes.Structure):
    """mr_geom_info (query.h)"""
    _fields_ = [("type", ctypes.c_int), ("body", ctypes.c_int),
                ("size", ctypes.c_double * 3), ("placement", ctypes.c_double * 12),
                ("friction", ctypes.c_double), ("restitution", ctypes.c_double),
                ("compliance", ctypes.c_double)]


class _RecordOptions(ctypes.Structure):
    """mr_record_options (query.h)"""
    _fields_ = [(k, ctypes.c_int) for k in ("every", "energy", "solver_stats", "contact_forces",
                                            "world_velocity", "poses", "com")]


class _Derivatives(ctypes.Structure):
    """mr_derivatives (dynamics.h)"""
    _fields_ = [("nv", ctypes.c_int)] + [
        (k, ctypes.POINTER(ctypes.c_double)) for k in
        ("dtau_dq", "dtau_dv", "dddq_dq", "dddq_dv", "dddq_dtau")] + [("work", ctypes.c_void_p)]


def quaternion_of(R):
    """The unit quaternion (x, y, z, w), w >= 0, of a rotation matrix (Shepperd's method, as
    the trajectory CSV's pose columns)."""
    m = np.asarray(R, dtype=np.float64)
    t = [1 + m[0, 0] + m[1, 1] + m[2, 2], 1 + m[0, 0] - m[1, 1] - m[2, 2],
         1 - m[0, 0] + m[1, 1] - m[2, 2], 1 - m[0, 0] - m[1, 1] + m[2, 2]]
    k = max(range(4), key=lambda i: (t[i], -i))
    s = 0.5 / np.sqrt(t[k])
    a, b, c = m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1]
    d, e, g = m[0, 1] + m[1, 0], m[0, 2] + m[2, 0], m[1, 2] + m[2, 1]
    q = [(a * s, b * s, c * s, 0.25 / s), (0.25 / s, d * s, e * s, a * s),
         (d * s, 0.25 / s, g * s, b * s), (e * s, g * s, 0.25 / s, c * s)][k]
    q = np.array(q)
    return -q if q[3] < 0 else q


def rotation_of(quaternion):
    """The rotation matrix of a quaternion (x, y, z, w), normalised first."""
    x, y, z, w = np.asarray(quaternion, dtype=np.float64) / np.linalg.norm(quaternion)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


class Pose:
    """A placement: position (3,) in m, unit quaternion (x, y, z, w) with w >= 0 and rotation
    (3, 3), such that a point x given in the placed frame is at rotation @ x + position in the
    reference frame. Unpacks as (position, quaternion); matrix is the 4 x 4 homogeneous form.
    The arrays are read-only copies."""
    __slots__ = ("position", "quaternion", "rotation")

    def __init__(self, position, rotation):
        self.position = readonly(np.array(position, dtype=np.float64))
        self.rotation = readonly(np.array(rotation, dtype=np.float64).reshape(3, 3))
        self.quaternion = readonly(quaternion_of(self.rotation))

    @classmethod
    def _flat(cls, X):
        """from 12 numbers: R row-major, then p"""
        return cls(X[9:12], X[:9])

    def __iter__(self):
        return iter((self.position, self.quaternion))

    @property
    def matrix(self):
        """The 4 x 4 homogeneous transform [[R, p], [0, 1]]."""
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = self.rotation, self.position
        return T

    def __repr__(self):
        p, q = (np.array2string(x, precision=6, separator=", ") for x in self)
        return f"Pose(position={p}, quaternion={q})"


def _coordinate_names(joint, jtype, nq, nv):
    """per-coordinate names of a joint's q and v"""
    if jtype == "free":
        return ([f"{joint}/{s}" for s in ("x", "y", "z", "qx", "qy", "qz", "qw")],
                [f"{joint}/{s}" for s in ("vx", "vy", "vz", "wx", "wy", "wz")])
    if jtype == "spherical":
        return ([f"{joint}/{s}" for s in ("qx", "qy", "qz", "qw")],
                [f"{joint}/{s}" for s in ("wx", "wy", "wz")])
    return [joint] * nq, [joint] * nv


class JointInfo:
    """A joint of the world's model (world.joint(name)): what it is and where its coordinates
    are. type is "revolute", "continuous", "prismatic", "spherical" or "free"; q and v are the
    slices of the state it owns (idx_q, nq, idx_v, nv); q_names, v_names its coordinates'
    names; lower, upper (nq,) the position limits (rad or m; -inf, inf where unlimited);
    velocity_limit, effort_limit, damping, armature (nv,) per dof; axis (3,) the unit axis of a
    1-dof joint in its frame; placement the joint frame in the parent body's frame at the neutral
    configuration; body and parent the bodies it joins (indices). dof and coordinate are the
    v and q indices of a 1-dof joint (None otherwise)."""
    __slots__ = ("name", "type", "body", "parent", "idx_q", "nq", "idx_v", "nv", "q", "v",
                 "q_names", "v_names", "lower", "upper", "velocity_limit", "effort_limit",
                 "damping", "armature", "axis", "placement", "dof", "coordinate")

    def __repr__(self):
        lim = ""
        if self.nq == 1 and np.isfinite(self.lower[0]):
            lim = f", limits [{self.lower[0]:g}, {self.upper[0]:g}]"
        return (f"<moreau.JointInfo '{self.name}': {self.type}, q[{self.idx_q}:"
                f"{self.idx_q + self.nq}], v[{self.idx_v}:{self.idx_v + self.nv}]{lim}>")


class BodyInfo:
    """A body of the world's model (world.body(name)): index (usable wherever a body index is:
    it converts with int() and indexes numpy arrays), name, parent (index, -1 for the world
    body), joint (the name of the joint carrying it), mass (kg, merged fixed links included),
    com (3,) its centre of mass in the body frame (m), inertia (3, 3) its rotational inertia
    about the centre of mass in body axes (kg m²)."""
    __slots__ = ("index", "name", "parent", "joint", "mass", "com", "inertia")

    def __index__(self):
        return self.index

    def __int__(self):
        return self.index

    def __eq__(self, other):
        if isinstance(other, BodyInfo):
            return self.index == other.index and self.name == other.name
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool):
            return self.index == other
        return NotImplemented

    def __hash__(self):
        return hash(self.index)

    def __repr__(self):
        return (f"<moreau.BodyInfo {self.index} '{self.name}': mass {self.mass:g} kg, "
                f"joint '{self.joint}'>")


class FrameInfo:
    """An operational frame (world.frame(name)): a body's own frame, a URDF link merged into its
    parent by a fixed joint (a foot, a sensor site), ...: index, name, body (index) and placement
    (Pose in the body's frame)."""
    __slots__ = ("index", "name", "body", "placement")

    def __repr__(self):
        return f"<moreau.FrameInfo {self.index} '{self.name}' on body {self.body}>"


class GeomInfo:
    """A collision geometry (world.geom(name)): index, name, type ("sphere", "box", ...), body
    (index), size (3,) as docs/scene-format.md gives it (radius; half extents; radius and half
    length; radii; 0 where unused), placement (Pose in the body frame), friction, restitution,
    compliance (m/N)."""
    __slots__ = ("index", "name", "type", "body", "size", "placement", "friction",
                 "restitution", "compliance")

    def __repr__(self):
        return f"<moreau.GeomInfo {self.index} '{self.name}': {self.type} on body {self.body}>"


class _Scratch:
    """One thread's memory for the dynamics algorithms (an mr_data and, when asked for, an
    mr_derivatives): the world is shared, its scratch is not."""

    def __init__(self, model, nv):
        self.model = model
        self.data = lib.mr_data_create(model)
        self.deriv = None
        if not self.data:
            raise MemoryError("mr_data_create: out of memory")

    def derivatives(self):
        if not self.deriv:
            self.deriv = lib.mr_derivatives_create(self.model)
            if not self.deriv:
                raise MemoryError("mr_derivatives_create: out of memory")
        return self.deriv

    def __del__(self):
        if getattr(self, "deriv", None):
            lib.mr_derivatives_free(self.deriv)
        if getattr(self, "data", None):
            lib.mr_data_free(self.data)


class World:
    """A compiled world loaded from a YAML scene (docs/scene-format.md), or from one robot's URDF
    (World.from_urdf): read-only, shared by any number of simulators (Sim, Batch), also across
    threads.

        world = moreau.World("scenes/solo_stand.yaml")
        world.joint("solo/FL_KFE")            # JointInfo: type, limits, indices, names
        world.body("solo/base_link").mass     # BodyInfo: mass, inertia, centre of mass
        M = world.mass_matrix(q)              # (nv, nv), pure functions of a state
        J = world.jacobian("solo/FL_FOOT", q) # (6, nv), rows linear then angular

    Sizes: nq, nv, nbodies (the world body 0 included), nframes, ngeoms. Names: body_names,
    joint_names (per body; "" for the world body), frame_names, geom_names, robots, q_names and
    v_names (one per coordinate: "solo/root_joint/x" ... "/qw", "solo/FL_KFE"; v:
    "solo/root_joint/vx" ... "/wz"), dof_names (the joint owning each dof). timestep and
    duration (s) are the scene's, record its record options, gravity_vector (3,) m/s².

    Dynamics (docs/python.md "Dynamics"): mass_matrix, bias, gravity, rnea, aba,
    rnea_derivatives, aba_derivatives, placement, jacobian, velocity, com, com_jacobian,
    kinetic_energy, potential_energy, and the configuration space: neutral, integrate,
    difference, normalize, random_configuration. Each takes the state as arguments and changes
    nothing: q (nq,), v, a, tau (nv,), float64 (checked: shape, dtype, finite values)."""

    __slots__ = ("_ptr", "_handle", "_model", "_local", "_given", "_tmp", "path", "nq", "nv", "nbodies",
                 "nframes", "ngeoms", "timestep", "duration", "body_names", "joint_names",
                 "dof_names", "geom_names", "frame_names", "robots", "q_names", "v_names", "record",
                 "gravity_vector", "_joints", "_bodies", "_frames", "_geoms", "_joint_index",
                 "_body_index", "_frame_index", "_geom_index", "__weakref__")

    def __init__(self, path):
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"path: expected a scene file's path, got {type(path).__name__}")
        path = os.fsdecode(path)
        self._tmp, self._handle = None, None
        err, rec = _Error(), _RecordOptions()
        self._ptr = lib.mr_world_load_recorded(os.fsencode(path), ctypes.byref(rec),
                                               ctypes.byref(err))
        if not self._ptr:
            _lib._raise(err)
        # freed when this object and every simulator on the world are gone, in any order
        self._handle = _lib.Owned(self._ptr, lib.mr_world_free)
        self.path, self._given = os.path.abspath(path), path
        self._model = lib.mr_world_model(self._ptr)
        self._local = threading.local()
        self.record = {k: getattr(rec, k) for k, _ in _RecordOptions._fields_}
        self._load_names()
        self._load_model()

    def _load_names(self):
        m, w = self._model, self._ptr
        info = lib.mr_world_get_info(w)
        self.nbodies = nb = info.nbodies
        self.body_names = [lib.mr_world_body_name(w, b).decode() for b in range(nb)]
        self.joint_names = [lib.mr_model_joint_name(m, b).decode() for b in range(nb)]
        self.nframes = lib.mr_model_nframes(m)
        self.frame_names = [lib.mr_model_frame_name(m, f).decode() for f in range(self.nframes)]
        self.ngeoms = info.ngeoms
        self.geom_names = [lib.mr_world_geom_name(w, g).decode() for g in range(info.ngeoms)]
        self.robots = [lib.mr_world_robot_name(w, r).decode() for r in range(info.nrobots)]

    def _load_model(self):
        info = lib.mr_world_get_info(self._ptr)
        self.nq, self.nv = info.nq, info.nv
        self.timestep, self.duration = info.timestep, info.duration
        g = np.empty(3)
        lib.mr_model_get_gravity(self._model, dptr(g))
        self.gravity_vector = readonly(g)
        self.dof_names = [lib.mr_world_dof_name(self._ptr, k).decode() for k in range(self.nv)]
        limits = [np.empty(self.nq), np.empty(self.nq)] + [np.empty(self.nv) for _ in range(4)]
        lib.mr_model_get_limits(self._model, *[dptr(a) for a in limits])
        self._bodies, self._joints = [], {}
        self.q_names, self.v_names = [""] * self.nq, [""] * self.nv
        for b in range(self.nbodies):
            self._bodies.append(self._body_info(b, limits))
        self._frames = [self._frame_info(f) for f in range(self.nframes)]
        self._geoms = [self._geom_info(g) for g in range(self.ngeoms)]
        self._joint_index = {j.name: j for j in self._joints.values()}
        self._body_index = {n: b for b, n in enumerate(self.body_names)}
        self._frame_index = {n: f for f, n in enumerate(self.frame_names)}
        self._geom_index = {n: g for g, n in enumerate(self.geom_names)}

    def _body_info(self, b, limits):
        err, raw = _Error(), _BodyInfo()
        _check(lib.mr_model_body_info(self._model, b, ctypes.byref(raw), ctypes.byref(err)), err)
        body = BodyInfo()
        body.index, body.name, body.parent = b, self.body_names[b], raw.parent
        body.joint, body.mass = self.joint_names[b], raw.mass
        body.com = readonly(np.array(raw.com[:]))
        body.inertia = readonly(np.array(raw.inertia[:]).reshape(3, 3))
        if b > 0 and raw.nq + raw.nv > 0:
            self._joints[b] = self._joint_info(b, raw, limits)
        return body

    def _joint_info(self, b, raw, limits):
        lower, upper, vel, effort, damping, armature = limits
        j = JointInfo()
        j.name, j.body, j.parent = self.joint_names[b], b, raw.parent
        j.type = lib.mr_joint_type_name(raw.joint_type).decode()
        j.idx_q, j.nq, j.idx_v, j.nv = raw.idx_q, raw.nq, raw.idx_v, raw.nv
        j.q, j.v = slice(j.idx_q, j.idx_q + j.nq), slice(j.idx_v, j.idx_v + j.nv)
        j.q_names, j.v_names = _coordinate_names(j.name, j.type, j.nq, j.nv)
        self.q_names[j.q], self.v_names[j.v] = j.q_names, j.v_names
        j.lower, j.upper = readonly(lower[j.q].copy()), readonly(upper[j.q].copy())
        j.velocity_limit, j.effort_limit = readonly(vel[j.v].copy()), readonly(effort[j.v].copy())
        j.damping, j.armature = readonly(damping[j.v].copy()), readonly(armature[j.v].copy())
        j.axis = readonly(np.array(raw.axis[:]))
        j.placement = Pose._flat(raw.placement[:])
        one = j.nq == 1 and j.nv == 1
        j.dof, j.coordinate = (j.idx_v, j.idx_q) if one else (None, None)
        return j

    def _frame_info(self, f):
        err, body, X = _Error(), ctypes.c_int(), np.empty(12)
        _check(lib.mr_model_frame_info(self._model, f, ctypes.byref(body), dptr(X),
                                       ctypes.byref(err)), err)
        fr = FrameInfo()
        fr.index, fr.name, fr.body, fr.placement = f, self.frame_names[f], body.value, \
            Pose._flat(X)
        return fr

    def _geom_info(self, g):
        err, raw = _Error(), _GeomInfo()
        _check(lib.mr_model_geom_info(self._model, g, ctypes.byref(raw), ctypes.byref(err)), err)
        gi = GeomInfo()
        gi.index, gi.name, gi.body = g, self.geom_names[g], raw.body
        gi.type = lib.mr_geom_type_name(raw.type).decode()
        gi.size = readonly(np.array(raw.size[:]))
        gi.placement = Pose._flat(raw.placement[:])
        gi.friction, gi.restitution, gi.compliance = raw.friction, raw.restitution, raw.compliance
        return gi

    @classmethod
    def from_urdf(cls, urdf, floating=False, name=None, ground=False, timestep=0.001):
        """A world holding one robot loaded from a URDF file, as `moreau rbd` loads it: with a
        free-flyer ("NAME/root_joint") when floating, fixed at the origin otherwise; names get
        the robot's name in front ("NAME/FL_KFE"; name defaults to the URDF's robot name), and
        ground=True adds a ground plane. Its scene is written to a temporary file that lives as
        long as the world (world.path)."""
        import tempfile
        import xml.etree.ElementTree as ET
        urdf = os.path.abspath(os.fsdecode(urdf))
        if name is None:
            try:
                name = ET.parse(urdf).getroot().get("name") or "robot"
            except (OSError, ET.ParseError) as e:
                raise MoreauError(f"{urdf}: {e}") from None
        name = as_name(name, "name")
        dt = _lib.as_scalar(timestep, "timestep", nonnegative=True)
        text = f"timestep: {dt!r}\n"
        if ground:
            text += "bodies:\n  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n"
        text += (f"robots:\n  - name: {json.dumps(name)}\n    urdf: {json.dumps(urdf)}\n"
                 f"    floating: {'true' if floating else 'false'}\n")
        tmp = tempfile.TemporaryDirectory(prefix="moreau_world_")
        path = os.path.join(tmp.name, "scene.yaml")
        with open(path, "w") as f:
            f.write(text)
        world = cls(path)
        world._tmp, world._given = tmp, os.path.basename(urdf)
        return world

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            self._local = None
            self._handle.disown()
            self._handle = None
        if getattr(self, "_tmp", None) is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __repr__(self):
        robots = f", robots {', '.join(self.robots)}" if self.robots else ""
        return (f"<moreau.World '{self._given}': nq {self.nq}, nv {self.nv}, "
                f"{self.nbodies} bodies{robots}, dt {self.timestep:g} s>")

    # ---- names ----

    def joint(self, name):
        """The JointInfo of a joint ("ROBOT/JOINT", "BODY/root_joint"). KeyError with the closest
        names when there is none."""
        name = as_name(name, "joint")
        try:
            return self._joint_index[name]
        except KeyError:
            raise unknown("joint", name, list(self._joint_index)) from None

    def joints(self):
        """Every moving joint's JointInfo, in model order."""
        return list(self._joint_index.values())

    def body(self, name):
        """The BodyInfo of a body by name ("ROBOT/LINK", a free scene body, "universe") or index.
        It converts to the body's index (int(), numpy indexing), so that older code using the
        index keeps working."""
        if isinstance(name, BodyInfo):
            return name
        if isinstance(name, (int, np.integer)) and not isinstance(name, bool):
            return self._bodies[_lib.as_index(name, self.nbodies, "body")]
        name = as_name(name, "body")
        try:
            return self._bodies[self._body_index[name]]
        except KeyError:
            raise unknown("body", name, self.body_names) from None

    def frame(self, name):
        """The FrameInfo of an operational frame (a body's frame or a merged link's)."""
        name = as_name(name, "frame")
        try:
            return self._frames[self._frame_index[name]]
        except KeyError:
            raise unknown("frame", name, self.frame_names) from None

    def geom(self, name):
        """The GeomInfo of a collision geometry, by name or index."""
        if isinstance(name, (int, np.integer)) and not isinstance(name, bool):
            return self._geoms[_lib.as_index(name, self.ngeoms, "geometry")]
        name = as_name(name, "geometry")
        try:
            return self._geoms[self._geom_index[name]]
        except KeyError:
            raise unknown("geometry", name, self.geom_names) from None

    def dof(self, joint):
        """The velocity index (into v) of a 1-dof joint named "ROBOT/JOINT"."""
        j = self.joint(joint)
        if j.dof is None:
            raise KeyError(f"joint '{joint}' is a {j.type} joint with {j.nv} dofs, not a 1-dof "
                           f"joint: use world.joint('{joint}').v")
        return j.dof

    def coordinate(self, joint):
        """The configuration index (into q) of a 1-dof joint named "ROBOT/JOINT"."""
        j = self.joint(joint)
        if j.coordinate is None:
            raise KeyError(f"joint '{joint}' is a {j.type} joint with {j.nq} coordinates, not a "
                           f"1-dof joint: use world.joint('{joint}').q")
        return j.coordinate

    def robot(self, name):
        """A robot's slices: dict(index, q=slice, v=slice, bodies=range)."""
        name = as_name(name, "robot")
        r = lib.mr_world_robot_index(self._ptr, name.encode())
        if r < 0:
            raise unknown("robot", name, self.robots)
        v = [ctypes.c_int() for _ in range(6)]
        lib.mr_world_robot_slice(self._ptr, r, *[ctypes.byref(x) for x in v])
        iq, nq, iv, nv, b0, nb = (x.value for x in v)
        return {"index": r, "q": slice(iq, iq + nq), "v": slice(iv, iv + nv),
                "bodies": range(b0, b0 + nb)}

    @property
    def mass(self):
        """The total mass of the moving bodies (kg)."""
        return lib.mr_model_total_mass(self._model)

    # ---- dynamics: pure functions of (q, v, ...) on this thread's scratch memory ----

    def _scratch(self):
        s = getattr(self._local, "s", None)
        if s is None:
            s = self._local.s = _Scratch(self._model, self.nv)
        return s

    def _q(self, q, name="q"):
        return as_array(q, (self.nq,), name, self.q_names)

    def _v(self, v, name="v"):
        return as_array(v, (self.nv,), name, self.v_names)

    def _vector(self, ptr, what):
        out = _lib.view(ptr, (self.nv,)).copy()
        if not np.isfinite(out).all():
            raise MoreauError(f"{what}: the result is not finite (a mass matrix that is not "
                              "positive definite: a massless body without armature?)")
        return out

    def neutral(self):
        """The neutral configuration (nq,): zero joint angles, identity quaternions, free bodies
        at the origin."""
        q = np.empty(self.nq)
        lib.mr_neutral(self._model, dptr(q))
        return q

    def random_configuration(self, seed=0):
        """A configuration (nq,) drawn uniformly within the joint limits (within ±pi, or ±1 m,
        where unlimited; uniform rotations for quaternions), deterministic in seed (an integer
        in [0, 2**64))."""
        seed = _lib.as_count(seed, "seed")
        s = ctypes.c_uint64(seed)
        q = np.empty(self.nq)
        lib.mr_random_configuration(self._model, ctypes.byref(s), dptr(q))
        return q

    def integrate(self, q, v, dt=1.0):
        """q ⊕ v dt (nq,): the configuration reached from q moving at v for dt seconds (the
        exponential map for free-flyer and spherical joints, v in their local frame)."""
        qa, va = self._q(q), self._v(v)
        dt = _lib.as_scalar(dt, "dt")
        out = np.empty(self.nq)
        lib.mr_integrate(self._model, dptr(qa), dptr(va), dt, dptr(out))
        return out

    def difference(self, q0, q1):
        """q1 ⊖ q0 (nv,): the velocity that takes q0 to q1 in unit time
        (integrate(q0, difference(q0, q1)) == q1)."""
        a, b = self._q(q0, "q0"), self._q(q1, "q1")
        out = np.empty(self.nv)
        lib.mr_difference(self._model, dptr(a), dptr(b), dptr(out))
        return out

    def normalize(self, q):
        """A copy of q with unit quaternions."""
        qa = self._q(q).copy()
        lib.mr_normalize(self._model, dptr(qa))
        return qa

    def mass_matrix(self, q):
        """The joint-space inertia matrix M(q) (nv, nv), symmetric, the joints' armature on its
        diagonal (CRBA): the kinetic energy is ½ vᵀ M v."""
        s, qa = self._scratch(), self._q(q)
        lib.mr_crba(self._model, s.data, dptr(qa))
        M = np.empty((self.nv, self.nv))
        lib.mr_mass_dense(s.data, dptr(M))
        return M

    crba = mass_matrix

    def bias(self, q, v):
        """The nonlinear effects b(q, v) = C(q, v) v + g(q) (nv,) (RNEA at a = 0): Coriolis,
        centrifugal and gravity forces, such that M a + b = τ. Joint damping is not included."""
        s, qa, va = self._scratch(), self._q(q), self._v(v)
        return self._vector(lib.mr_nonlinear_effects(self._model, s.data, dptr(qa), dptr(va)),
                            "bias")

    nonlinear_effects = bias

    def gravity(self, q):
        """The generalized gravity g(q) (nv,): the joint torques that hold q still,
        b(q, 0). (The gravity vector itself is world.gravity_vector.)"""
        s, qa = self._scratch(), self._q(q)
        return self._vector(lib.mr_generalized_gravity(self._model, s.data, dptr(qa)),
                            "gravity")

    def rnea(self, q, v, a):
        """Inverse dynamics τ = M(q) a + b(q, v) (nv,) (recursive Newton-Euler), without
        external forces."""
        s, qa, va, aa = self._scratch(), self._q(q), self._v(v), self._v(a, "a")
        return self._vector(lib.mr_rnea(self._model, s.data, dptr(qa), dptr(va), dptr(aa)),
                            "rnea")

    def aba(self, q, v, tau):
        """Forward dynamics a = M(q)⁻¹ (τ − b(q, v)) (nv,) (articulated-body algorithm), without
        contacts, limits, damping or external forces."""
        s, qa, va = self._scratch(), self._q(q), self._v(v)
        ta = self._v(tau, "tau")
        return self._vector(lib.mr_aba(self._model, s.data, dptr(qa), dptr(va), dptr(ta)),
                            "aba")

    def _derivatives(self, s):
        dd = ctypes.cast(s.derivatives(), ctypes.POINTER(_Derivatives)).contents
        keys = ("dtau_dq", "dtau_dv", "dddq_dq", "dddq_dv", "dddq_dtau")
        return {k: _lib.view(getattr(dd, k), (self.nv, self.nv)).copy() for k in keys}

    def rnea_derivatives(self, q, v, a):
        """The derivatives of τ = rnea(q, v, a) (docs/derivatives.md): a dict of (nv, nv) arrays,
        entry [i, k] = ∂τ_i/∂x_k: dtau_dq (q along the tangent space: column k is d/dε of τ at
        q ⊕ ε e_k), dtau_dv, and M = ∂τ/∂a = M(q); and tau (nv,). The names are those of
        `moreau rbd --derivatives --json`."""
        s, qa, va, aa = self._scratch(), self._q(q), self._v(v), self._v(a, "a")
        dd = s.derivatives()
        lib.mr_rnea_derivatives(self._model, s.data, dd, dptr(qa), dptr(va), dptr(aa))
        d = self._derivatives(s)
        M = np.empty((self.nv, self.nv))
        lib.mr_mass_dense(s.data, dptr(M))
        tau = self.rnea(qa, va, aa)
        return {"dtau_dq": d["dtau_dq"], "dtau_dv": d["dtau_dv"], "M": M, "tau": tau}

    def aba_derivatives(self, q, v, tau):
        """The derivatives of a = aba(q, v, tau): a dict of (nv, nv) arrays, entry [i, k] =
        ∂a_i/∂x_k: dddq_dq (tangent space, as rnea_derivatives), dddq_dv, dddq_dtau = M(q)⁻¹;
        and ddq (nv,) (the names of `moreau rbd --derivatives --json`). MoreauError when M(q) is
        not positive definite."""
        s, qa, va = self._scratch(), self._q(q), self._v(v)
        ta = self._v(tau, "tau")
        dd, err = s.derivatives(), _Error()
        _check(lib.mr_aba_derivatives(self._model, s.data, dd, dptr(qa), dptr(va), dptr(ta),
                                      ctypes.byref(err)), err)
        d = self._derivatives(s)
        return {"dddq_dq": d["dddq_dq"], "dddq_dv": d["dddq_dv"], "dddq_dtau": d["dddq_dtau"],
                "ddq": self.aba(qa, va, ta)}

    # ---- kinematics ----

    def _target(self, name):
        """("body", index) or ("frame", index) for a body or frame given by name, BodyInfo,
        FrameInfo or body index."""
        if isinstance(name, FrameInfo):
            return "frame", name.index
        if isinstance(name, (BodyInfo, int, np.integer)) and not isinstance(name, bool):
            return "body", self.body(name).index
        name = as_name(name, "body or frame")
        if name in self._body_index:
            return "body", self._body_index[name]
        if name in self._frame_index:
            return "frame", self._frame_index[name]
        raise unknown("body or frame", name, self.body_names + self.frame_names)

    def _kinematics(self, q, frames):
        s, qa = self._scratch(), self._q(q)
        lib.mr_forward_kinematics(self._model, s.data, dptr(qa), None, None)
        if frames:
            lib.mr_update_frames(self._model, s.data)
        return s

    def placement(self, name, q):
        """The world placement of a body or frame (by name, BodyInfo, FrameInfo or body index)
        at q: a Pose (position (3,) of its origin in m, quaternion (x, y, z, w), rotation
        (3, 3)), x_world = rotation @ x_local + position."""
        kind, i = self._target(name)
        s = self._kinematics(q, kind == "frame")
        X = np.empty((self.nframes if kind == "frame" else self.nbodies, 12))
        (lib.mr_data_frame_placements if kind == "frame" else lib.mr_data_body_placements)(
            s.data, dptr(X))
        return Pose._flat(X[i])

    def placements(self, q):
        """Every body's world placement at q: (R (nbodies, 3, 3), p (nbodies, 3))."""
        s = self._kinematics(q, False)
        X = np.empty((self.nbodies, 12))
        lib.mr_data_body_placements(s.data, dptr(X))
        return X[:, :9].reshape(-1, 3, 3).copy(), X[:, 9:].copy()

    def jacobian(self, name, q, frame="world"):
        """The Jacobian (6, nv) of a body or frame at q: its spatial velocity is J @ v, rows
        linear (3) then angular (3) velocity. frame says where and in which axes:
          "world"   at the world origin, world axes: the velocity of the body's point passing
                    through the world origin (ṗ − ω × p) and ω (Pinocchio's WORLD);
          "local"   at the frame origin p, in the frame's own axes: (Rᵀ ṗ, Rᵀ ω) (LOCAL);
          "local_world_aligned" (or "world_aligned")  at the frame origin, world axes: (ṗ, ω),
                    ṗ the world velocity of the frame origin (LOCAL_WORLD_ALIGNED).
        v follows DESIGN.md §3 (a free-flyer's linear and angular velocity in its local frame),
        so the free-flyer's columns map those."""
        ref = self._reference(frame)
        kind, i = self._target(name)
        s = self._kinematics(q, kind == "frame")
        J = np.empty((6, self.nv))
        fn = lib.mr_frame_jacobian if kind == "frame" else lib.mr_body_jacobian
        fn(self._model, s.data, i, ref, dptr(J))
        return J

    @staticmethod
    def _reference(frame):
        if frame not in _REFERENCES:
            raise ValueError(f"frame = {frame!r}: expected one of "
                             f"{', '.join(repr(k) for k in _REFERENCES)}")
        return _REFERENCES[frame]

    def velocity(self, name, q, v, frame="local_world_aligned"):
        """The spatial velocity (6,) of a body or frame at (q, v): jacobian(name, q, frame) @ v,
        linear then angular (by default the world velocity of its origin and its angular
        velocity, world axes)."""
        return self.jacobian(name, q, frame) @ self._v(v)

    def _com(self, q, robot, J):
        s = self._kinematics(q, False)
        first, n = 1, self.nbodies
        if robot is not None:
            b = self.robot(robot)["bodies"]
            first, n = b.start, len(b)
        return np.array(lib.mr_center_of_mass_jacobian(self._model, s.data, first, n,
                                                       dptr(J)).v)

    def com(self, q, robot=None):
        """The centre of mass (3,) in the world frame at q (m), of a robot or of every body."""
        return self._com(q, robot, None)

    def com_jacobian(self, q, robot=None):
        """The Jacobian (3, nv) of the centre of mass at q: its world velocity is J @ v."""
        J = np.empty((3, self.nv))
        self._com(q, robot, J)
        return J

    def kinetic_energy(self, q, v):
        """½ vᵀ M(q) v (J), the rotors' (armature) energy included."""
        s, qa, va = self._scratch(), self._q(q), self._v(v)
        return lib.mr_kinetic_energy(self._model, s.data, dptr(qa), dptr(va))

    def potential_energy(self, q):
        """−Σ mᵢ gᵀ cᵢ (J): m g z for gravity along −z."""
        s, qa = self._scratch(), self._q(q)
        return lib.mr_potential_energy(self._model, s.data, dptr(qa))
