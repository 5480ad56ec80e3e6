"""The shared library, its function signatures, errors and the argument checks every public
function uses. Internal: the public names are re-exported by the package."""

import ctypes
import ctypes.util
import difflib
import numbers
import os

import numpy as np

try:  # written by `make install` and by `pip install` (setup.py): where the library was put
    from . import _paths
except ImportError:  # a source tree used in place
    _paths = None


class MoreauError(RuntimeError):
    """A failed library call: a step that diverged, a scene that does not load, a solver
    failure. The message is the library's (file, line, value; the step and the coordinate)."""


class InvalidInputError(MoreauError, ValueError):
    """The library refused a value (a NaN written in place into q, a negative gain, an unknown
    posture): both a MoreauError and a ValueError."""


# mr_status codes (error.h)
MR_ERR_INVALID = 3


class _Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("msg", ctypes.c_char * 512)]


class _Vec3(ctypes.Structure):
    _fields_ = [("v", ctypes.c_double * 3)]


class _Info(ctypes.Structure):
    """mr_world_info (world.h)"""
    _fields_ = [("nq", ctypes.c_int), ("nv", ctypes.c_int), ("nbodies", ctypes.c_int),
                ("ngeoms", ctypes.c_int), ("nrobots", ctypes.c_int),
                ("timestep", ctypes.c_double), ("duration", ctypes.c_double)]


def _raise(err):
    msg = err.msg.decode(errors="replace")
    if err.status == MR_ERR_INVALID:
        raise InvalidInputError(msg)
    raise MoreauError(msg)


def _check(status, err):
    if status:
        _raise(err)


# ---- finding the library ----

def _candidates():
    """(path, where) in the order library_path() tries them."""
    env = os.environ.get("MOREAU_LIB")
    if env:
        yield env, "MOREAU_LIB"
    if _paths is not None and getattr(_paths, "LIBDIR", None):
        yield os.path.join(_paths.LIBDIR, "libmoreau.so"), "the installed prefix"
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.normpath(os.path.join(here, "..", "..", "build", "libmoreau.so")), \
        "the source tree's build/"
    if _paths is not None and getattr(_paths, "BUILD_DIR", None):
        yield os.path.join(_paths.BUILD_DIR, "libmoreau.so"), "the build tree pip installed from"


def library_path():
    """The path of the shared library this package loads: the file named by the MOREAU_LIB
    environment variable; else libmoreau.so in the prefix `make install` put the package in;
    else the source tree's build/libmoreau.so (this package used in place, or the tree that
    `pip install` was run from); else the system's library path (ldconfig)."""
    tried = []
    for path, where in _candidates():
        if where == "MOREAU_LIB" or os.path.exists(path):
            return path
        tried.append(path)
    found = ctypes.util.find_library("moreau")
    if found:
        return found
    raise OSError("libmoreau.so not found (tried " + ", ".join(tried) + " and the system's "
                  "library path): build it (make shared), install it (make install) or set "
                  "MOREAU_LIB to its path")


def _data_roots():
    """(root, where) in the order data_path() tries them"""
    env = os.environ.get("MOREAU_DATA")
    if env:
        yield env, "MOREAU_DATA"
    if _paths is not None and getattr(_paths, "DATADIR", None):
        yield _paths.DATADIR, "the installed prefix"
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.normpath(os.path.join(here, "..", "..")), "the source tree"
    if _paths is not None and getattr(_paths, "SOURCE_DIR", None):
        yield _paths.SOURCE_DIR, "the source tree pip installed from"


def data_path(relative):
    """The absolute path of a file shipped with moreau, e.g. data_path("scenes/solo_stand.yaml")
    or data_path("robots/solo12/solo12.urdf"): under MOREAU_DATA, else the prefix `make install`
    put scenes/ and robots/ in (PREFIX/share/moreau), else the source tree. FileNotFoundError
    naming the places tried."""
    if not isinstance(relative, (str, os.PathLike)):
        raise TypeError(f"relative: expected a path, got {type(relative).__name__}")
    tried = []
    for root, _ in _data_roots():
        path = os.path.join(root, os.fspath(relative))
        if os.path.exists(path):
            return os.path.abspath(path)
        tried.append(path)
    raise FileNotFoundError(f"{relative} not found (tried {', '.join(tried)}); set MOREAU_DATA "
                            "to the directory holding scenes/ and robots/")


def bin_path():
    """The `moreau` command matching the library: MOREAU_BIN, else beside the library
    (build/moreau, or PREFIX/bin/moreau for PREFIX/lib), else on PATH; None when not found."""
    env = os.environ.get("MOREAU_BIN")
    if env:
        return env
    lib = os.path.dirname(os.path.abspath(library_path()))
    for cand in (os.path.join(lib, "moreau"), os.path.join(lib, "..", "bin", "moreau")):
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return os.path.normpath(cand)
    import shutil
    return shutil.which("moreau")


# ---- signatures ----

def _declare(lib):
    P, I, D, S, L = ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_char_p, ctypes.c_long
    E = ctypes.POINTER(_Error)
    DP = ctypes.POINTER(ctypes.c_double)
    IP = ctypes.POINTER(ctypes.c_int)
    V3P = ctypes.POINTER(_Vec3)
    sigs = {
        # world.h
        "mr_world_load": (P, [S, E]), "mr_world_free": (None, [P]),
        "mr_world_get_info": (_Info, [P]),
        "mr_world_body_name": (S, [P, I]), "mr_world_dof_name": (S, [P, I]),
        "mr_world_geom_name": (S, [P, I]), "mr_world_robot_name": (S, [P, I]),
        "mr_world_robot_slice": (I, [P, I] + [IP] * 6),
        "mr_world_joint_dof": (I, [P, S]), "mr_world_dof_coordinate": (I, [P, I]),
        "mr_world_body_index": (I, [P, S]), "mr_world_robot_index": (I, [P, S]),
        # sim.h, control.h
        "mr_sim_create": (P, [P, S, E]), "mr_sim_free": (None, [P]),
        "mr_sim_step": (I, [P, E]), "mr_sim_reset": (None, [P]),
        "mr_sim_time_stages": (None, [P, I]),
        "mr_sim_reset_posture": (I, [P, S, S, E]),
        "mr_sim_qpos": (DP, [P]), "mr_sim_qvel": (DP, [P]),
        "mr_sim_ctrl_torque": (DP, [P]), "mr_sim_ctrl_target": (DP, [P]),
        "mr_sim_ctrl_kp": (DP, [P]), "mr_sim_ctrl_kd": (DP, [P]),
        "mr_sim_set_state": (I, [P, DP, DP, E]), "mr_sim_set_time": (None, [P, D]),
        "mr_sim_time": (D, [P]), "mr_sim_steps": (L, [P]),
        "mr_sim_set_joint_torque": (I, [P, I, D, E]),
        "mr_sim_set_joint_target": (I, [P, I, D, E]),
        "mr_sim_set_joint_gains": (I, [P, I, D, D, E]),
        "mr_sim_set_wrench": (I, [P, I, _Vec3, _Vec3, E]),
        "mr_sim_clear_wrenches": (None, [P]),
        "mr_sim_contact_forces": (I, [P, P, I]),
        "mr_sim_contact_wrenches": (DP, [P]), "mr_sim_body_poses": (DP, [P]),
        "mr_sim_com": (_Vec3, [P, I]), "mr_sim_energy": (D, [P]),
        "mr_sim_torque": (DP, [P]),
        "mr_sim_derivatives_create": (P, [P, E]), "mr_sim_derivatives_free": (None, [P]),
        "mr_sim_step_derivatives": (I, [P, P, E]),
        "mr_sim_set_mpc_velocity": (I, [P, S, DP, E]),
        "mr_sim_get_mpc_status": (I, [P, S, P, E]),
        # batch.h
        "mr_batch_create": (P, [P, I, I, S, E]), "mr_batch_free": (None, [P]),
        "mr_batch_size": (I, [P]), "mr_batch_threads": (I, [P]), "mr_batch_sim": (P, [P, I]),
        "mr_batch_step": (I, [P, I, E]), "mr_batch_status": (IP, [P]),
        "mr_batch_error": (S, [P, I]),
        "mr_batch_get_state": (None, [P, DP, DP]), "mr_batch_set_state": (I, [P, DP, DP, E]),
        "mr_batch_get_controls": (None, [P, DP, DP]),
        "mr_batch_set_controls": (I, [P, DP, DP, E]), "mr_batch_reset": (None, [P, I]),
        # dynamics.h, sim_derivatives.h
        "mr_data_create": (P, [P]), "mr_data_free": (None, [P]),
        # inverse.h
        "mr_sim_contacts": (I, [P, ctypes.POINTER(P), ctypes.POINTER(DP)]),
        "mr_contact_id_create": (P, [P, I, E]), "mr_contact_id_free": (None, [P]),
        "mr_contact_id_solve": (I, [P, P, DP, DP, DP, P, I, DP, P, DP, DP, P, E]),
        "mr_neutral": (None, [P, DP]),
        "mr_random_configuration": (None, [P, ctypes.POINTER(ctypes.c_uint64), DP]),
        "mr_integrate": (None, [P, DP, DP, D, DP]), "mr_difference": (None, [P, DP, DP, DP]),
        "mr_normalize": (None, [P, DP]),
        "mr_forward_kinematics": (None, [P, P, DP, DP, DP]), "mr_update_frames": (None, [P, P]),
        "mr_rnea": (DP, [P, P, DP, DP, DP]), "mr_nonlinear_effects": (DP, [P, P, DP, DP]),
        "mr_generalized_gravity": (DP, [P, P, DP]), "mr_crba": (DP, [P, P, DP]),
        "mr_mass_dense": (None, [P, DP]), "mr_aba": (DP, [P, P, DP, DP, DP]),
        "mr_frame_jacobian": (None, [P, P, I, I, DP]), "mr_body_jacobian": (None, [P, P, I, I, DP]),
        "mr_kinetic_energy": (D, [P, P, DP, DP]), "mr_potential_energy": (D, [P, P, DP]),
        "mr_center_of_mass": (_Vec3, [P, P, DP]),
        "mr_derivatives_create": (P, [P]), "mr_derivatives_free": (None, [P]),
        "mr_rnea_derivatives": (None, [P, P, P, DP, DP, DP]),
        "mr_aba_derivatives": (I, [P, P, P, DP, DP, DP, E]),
        "mr_model_total_mass": (D, [P]),
        "mr_joint_type_name": (S, [I]), "mr_geom_type_name": (S, [I]),
        # query.h
        "mr_world_model": (P, [P]),
        "mr_world_load_recorded": (P, [S, P, E]),
        "mr_model_body_info": (I, [P, I, P, E]), "mr_model_joint_name": (S, [P, I]),
        "mr_model_nframes": (I, [P]), "mr_model_frame_name": (S, [P, I]),
        "mr_model_frame_info": (I, [P, I, IP, DP, E]),
        "mr_model_geom_info": (I, [P, I, P, E]),
        "mr_model_get_limits": (None, [P, DP, DP, DP, DP, DP, DP]),
        "mr_model_get_gravity": (None, [P, DP]),
        "mr_data_body_placements": (None, [P, DP]), "mr_data_frame_placements": (None, [P, DP]),
        "mr_center_of_mass_jacobian": (_Vec3, [P, P, I, I, DP]),
        "mr_sim_check_inputs": (I, [P, E]), "mr_sim_step_n": (I, [P, L, E]),
        "mr_sim_get_wrench": (I, [P, I, V3P, V3P, E]),
        "mr_batch_step_checked": (I, [P, I, E]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


lib = _declare(ctypes.CDLL(library_path()))


def __getattr__(name):
    """the library's functions as attributes of this module too (moreau._lib.mr_sim_step), as
    when moreau._lib was the library itself"""
    if name.startswith("mr_"):
        return getattr(lib, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Owned:
    """A library object (a world) freed when its owner is gone and no borrower (a simulator, a
    batch on that world) uses it any more. The garbage collector finalises the objects of an
    unreachable reference cycle in no set order — a simulator and a recorder refer to each other,
    and with them the world they use is unreachable too — so a world's finaliser may run before
    its simulators'; the world is then freed by the last of them."""
    __slots__ = ("ptr", "free", "users", "owned", "lock")

    def __init__(self, ptr, free):
        import threading
        self.ptr, self.free, self.users, self.owned = ptr, free, 0, True
        self.lock = threading.Lock()

    def acquire(self):
        with self.lock:
            self.users += 1

    def release(self):
        with self.lock:
            self.users -= 1
            self._free_if_unused()

    def disown(self):
        with self.lock:
            self.owned = False
            self._free_if_unused()

    def _free_if_unused(self):
        if not self.owned and self.users <= 0 and self.ptr:
            self.free(self.ptr)
            self.ptr = None


def dptr(a):
    """A double* to a float64 C-contiguous array (None for None)."""
    return None if a is None else a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


def view(ptr, shape):
    """A numpy array over library memory (no copy)."""
    return np.ctypeslib.as_array(ptr, shape=shape)


def readonly(a):
    a.flags.writeable = False
    return a


# ---- argument checks ----

def _fmt_shape(shape):
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def as_array(x, shape, name, names=None, finite=True):
    """x as a C-contiguous float64 array of exactly `shape` (a copy when x is not already one):
    TypeError for anything that is not an array of real numbers (booleans, complex, strings,
    objects), ValueError naming the argument, the expected and the received shape, or the first
    entry that is not finite (with its coordinate's name from `names` when given)."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name}: expected an array of real numbers of shape "
                        f"{_fmt_shape(shape)}, got {type(x).__name__}")
    try:
        a = np.asarray(x)
    except (ValueError, TypeError) as e:  # ragged nested lists
        raise ValueError(f"{name}: expected an array of shape {_fmt_shape(shape)}: {e}") from None
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name}: expected real numbers (float64) of shape {_fmt_shape(shape)}, "
                        f"got dtype {a.dtype}")
    if a.shape != tuple(shape):
        raise ValueError(f"{name}: expected shape {_fmt_shape(shape)}, got shape "
                         f"{_fmt_shape(a.shape)}")
    a = np.ascontiguousarray(a, dtype=np.float64)
    if finite:
        bad = ~np.isfinite(a)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            where = ""
            if names is not None:
                where = f" ({names[idx[-1]]})"
            key = ", ".join(str(i) for i in idx)
            raise ValueError(f"{name}[{key}] = {a[idx]} is not finite{where}")
    return a


def as_scalar(x, name, nonnegative=False):
    """x as a finite float: TypeError when it is not a real number (bool included), ValueError
    when it is not finite (or negative with nonnegative)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        if isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iuf":
            x = x.item()
        else:
            raise TypeError(f"{name}: expected a real number, got {type(x).__name__}")
    x = float(x)
    if not np.isfinite(x):
        raise ValueError(f"{name} = {x} is not finite")
    if nonnegative and x < 0.0:
        raise ValueError(f"{name} = {x} is negative")
    return x


def as_count(n, name):
    """n as a non-negative int: TypeError for anything but an integer (bool and 2.0 included),
    ValueError when negative."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name}: expected a non-negative integer, got {type(n).__name__} "
                        f"{n!r}")
    n = int(n)
    if n < 0:
        raise ValueError(f"{name} = {n} is negative")
    return n


def as_index(i, n, name):
    """i as an int in [0, n): TypeError when not an integer, IndexError out of range."""
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {type(i).__name__} {i!r}")
    i = int(i)
    if not 0 <= i < n:
        raise IndexError(f"{name} = {i} out of range [0, {n})")
    return i


def as_name(x, what):
    if not isinstance(x, str):
        raise TypeError(f"{what}: expected a name (str), got {type(x).__name__} {x!r}")
    return x


def unknown(what, name, names):
    """A KeyError for an unknown name, with the closest known names."""
    close = difflib.get_close_matches(name, names, n=5, cutoff=0.5)
    if not close:  # the same last part under another prefix ("FL_KFE" for "solo/FL_KFE")
        tail = name.rsplit("/", 1)[-1]
        close = [n for n in names if n.rsplit("/", 1)[-1] == tail][:5]
    if not close:  # a part of a name ("base" for "solo/base_link")
        low = name.lower()
        close = [n for n in names if low and low in n.lower()][:5]
    hint = f"; closest: {', '.join(close)}" if close else ""
    listing = "" if close or len(names) > 12 else f"; known: {', '.join(names)}"
    return KeyError(f"no {what} '{name}'{hint}{listing}")
