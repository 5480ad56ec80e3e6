"""moreau from Python: ctypes bindings over the shared library libmoreau.so, numpy arrays.

    import moreau
    world = moreau.World("scenes/solo_stand.yaml")    # a compiled, read-only world
    sim = moreau.Sim(world)                            # one simulator (state, controls)
    sim.joint("solo/FL_KFE").target = -1.4             # PD target, written in place
    sim.step(100)
    print(sim.body("solo/base_link").pose, sim.stats["eps_abs"], len(sim.contacts()))
    M = world.mass_matrix(sim.q)                       # the dynamics, Pinocchio-style
    J = world.jacobian("solo/FL_FOOT", sim.q)          # 6 x nv, rows linear then angular

State and controls (q, v, torque, target, kp, kd) are numpy views of the simulator's own
memory: writing them changes what the next step uses, and reading them after a step shows the
new values without a copy; assigning a whole array (sim.q = x) is checked and copied in. Units
and frames are those of docs/api.md: SI, a free-flyer's q = [x, y, z, qx, qy, qz, qw] and
v = [linear, angular] in the base's local frame, world-frame wrenches, poses and contact forces.

World      the compiled world: names, joints, bodies, frames, geometries and its dynamics
Sim        one simulator: state, controls, stepping, named access (joint(), body())
Batch      n simulators stepped in parallel, states and controls as (n, nq) / (n, nv) arrays
Recorder   a Python-driven run's trajectory and contacts, written as `moreau run --out` does,
           and replayed in the HTML viewer (sim.record())
moreau.env a vectorised environment with Gymnasium's methods, and Solo-12 velocity tracking

Bad arguments raise TypeError / ValueError naming the argument and the expected and received
shapes; the library's own failures raise MoreauError (InvalidInputError, also a ValueError, when
it refused a value). docs/python.md is the reference.

The library is found through the MOREAU_LIB environment variable (a path to libmoreau.so), then
in the prefix `make install` put this package in, then in the source tree's build/ (this package
used in place, or the tree pip installed it from), then on the system's library path
(library_path() says which); the shipped scenes and robots through data_path().
"""

from . import _lib
from ._lib import InvalidInputError, MoreauError, bin_path, data_path, library_path
from ._lib import _Error, _Vec3, _check  # noqa: F401 (for modules of this package)
from ._lib import dptr as _dptr, view as _view  # noqa: F401
from .batch import Batch
from .record import Recorder
from .sim import CONTACT_DTYPE, DERIVATIVE_NAMES, BodyView, JointView, Sim
from .world import BodyInfo, FrameInfo, GeomInfo, JointInfo, Pose, World
from . import actuators as _actuators  # noqa: F401,E402 (World.actuator_names, Sim.set_ctrl)

__all__ = ["World", "Sim", "Batch", "Recorder", "Pose", "JointInfo", "BodyInfo", "FrameInfo",
           "GeomInfo", "JointView", "BodyView", "MoreauError", "InvalidInputError",
           "library_path", "bin_path", "data_path", "DERIVATIVE_NAMES", "CONTACT_DTYPE"]

__version__ = "0.1.0"

# the live viewer (moreau.viewer.launch), a module of its own
from . import viewer  # noqa: E402,F401
