"""Actuators and keyframes of MJCF models (docs/mjcf.md): World.actuator_names, Sim.set_ctrl and
Sim.reset_keyframe, attached to the classes of world.py and sim.py."""
import ctypes

from ._lib import _Error, _check, as_array, as_name, dptr, lib
from .sim import Sim
from .world import World

P, I, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
for _name, _res, _args in (("mr_world_actuator_count", I, [P]),
                           ("mr_world_actuator_name", S, [P, I]),
                           ("mr_sim_set_ctrl", I, [P, ctypes.POINTER(ctypes.c_double),
                                                   ctypes.POINTER(_Error)]),
                           ("mr_sim_reset_keyframe", I, [P, S, ctypes.POINTER(_Error)])):
    _fn = getattr(lib, _name)
    _fn.restype, _fn.argtypes = _res, _args


def _actuator_names(world):
    """The world's actuators ("ROBOT/NAME"), in the order of Sim.set_ctrl's controls."""
    n = lib.mr_world_actuator_count(world._ptr)
    return [lib.mr_world_actuator_name(world._ptr, a).decode() for a in range(n)]


def _set_ctrl(self, ctrl):
    """Set one control per actuator (World.actuator_names' order): motors' torques, servos'
    targets, clamped to their ctrlrange, effective from the next step. ValueError naming ctrl and
    the shapes when ctrl is not (nu,) finite numbers."""
    names = _actuator_names(self.world)
    a = as_array(ctrl, (len(names),), "ctrl", names=names)
    err = _Error()
    _check(lib.mr_sim_set_ctrl(self._ptr, dptr(a), ctypes.byref(err)), err)


def _reset_keyframe(self, name):
    """Reset, then start from the keyframe "ROBOT/NAME" (its state, time and controls)."""
    as_name(name, "name")
    err = _Error()
    _check(lib.mr_sim_reset_keyframe(self._ptr, name.encode(), ctypes.byref(err)), err)


World.actuator_names = property(_actuator_names)
Sim.set_ctrl = _set_ctrl
Sim.reset_keyframe = _reset_keyframe
