"""Environments for learning, with Gymnasium's method names and return values and no dependency
beyond numpy: a vectorised environment over a Batch, and one task on a shipped robot, Solo-12
tracking a commanded velocity.

    env = moreau.env.SoloVelocity(num_envs=16, threads=2)
    obs, info = env.reset(seed=0)                       # (16, 51) float32
    for _ in range(500):
        actions = env.action_space.sample()             # (16, 12) in [-1, 1]
        obs, reward, terminated, truncated, info = env.step(actions)

The vector API follows Gymnasium's VectorEnv (num_envs, single_observation_space,
single_action_space, observation_space and action_space batched over the environments, reset,
step, close) with its "next-step" autoreset (Gymnasium >= 1.0): an environment that terminated
or was truncated at step k is reset by step k + 1, which ignores its action and returns its first
observation with reward 0 and both flags false. docs/python.md, "Environments", documents the
task, its reward and its termination."""

import numpy as np

from . import _lib
from ._lib import as_array, as_count
from .batch import Batch
from .world import World


class Box:
    """A box of R^shape, Gymnasium's Box without the dependency: low and high (arrays of the
    shape, -inf / inf for unbounded), dtype, and sample() drawing uniformly within the bounds
    (a standard normal along unbounded ones) from its own generator (seed(s) resets it).
    contains(x) says whether x has the shape and lies within the bounds."""

    def __init__(self, low, high, shape, dtype=np.float32, seed=None):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape).copy()
        if np.any(self.low > self.high):
            raise ValueError("Box: low > high")
        self._rng = np.random.default_rng(seed)

    def seed(self, seed=None):
        """Reset the sampling generator (an int, or None for fresh entropy)."""
        self._rng = np.random.default_rng(seed)

    def sample(self):
        """One point of the box (dtype, shape)."""
        lo, hi = self.low.astype(np.float64), self.high.astype(np.float64)
        bounded = np.isfinite(lo) & np.isfinite(hi)
        x = self._rng.standard_normal(self.shape)
        u = self._rng.uniform(size=self.shape)
        x = np.where(bounded, lo + u * (hi - lo), x)
        x = np.where(np.isfinite(lo) & ~np.isfinite(hi), lo + np.abs(x), x)
        x = np.where(~np.isfinite(lo) & np.isfinite(hi), hi - np.abs(x), x)
        return x.astype(self.dtype)

    def contains(self, x):
        """True when x has the box's shape and lies within its bounds."""
        x = np.asarray(x)
        return bool(x.shape == self.shape and np.all(x >= self.low) and np.all(x <= self.high))

    def __repr__(self):
        lo, hi = np.unique(self.low), np.unique(self.high)
        show = lambda a, full: (f"{a[0]:g}" if a.size == 1 else  # noqa: E731
                                np.array2string(full, precision=3))
        return f"Box({show(lo, self.low)}, {show(hi, self.high)}, {self.shape}, {self.dtype})"


class VecEnv:
    """The vectorised environment: num_envs simulators of one World in a Batch on `threads`
    threads, each environment step is `decimation` simulator steps under a held action. A task
    subclasses it and defines single_observation_space, single_action_space and _reset_envs,
    _apply, _advance, _observe, _reward, _terminated.

    reset(seed=None, options=None) -> (obs, info); step(actions) -> (obs, reward, terminated,
    truncated, info): obs (num_envs, *single_observation_space.shape), reward float64
    (num_envs,), terminated and truncated bool (num_envs,), info a dict of arrays. Environments
    whose simulator diverged are terminated (info["diverged"]). Results depend only on the seed
    and the actions: the same seed and actions give the same observations bit for bit, whatever
    the thread count."""

    metadata = {"autoreset_mode": "NextStep", "render_modes": []}

    def __init__(self, world, num_envs, threads=1, decimation=10, max_steps=1000, solver=None):
        if not isinstance(world, World):
            raise TypeError(f"world: expected a moreau.World, got {type(world).__name__}")
        self.world = world
        self.num_envs = as_count(num_envs, "num_envs")
        self.decimation = as_count(decimation, "decimation")
        self.max_steps = as_count(max_steps, "max_steps")
        if self.decimation < 1 or self.max_steps < 1:
            raise ValueError("decimation and max_steps must be >= 1")
        self.batch = Batch(world, self.num_envs, threads, solver)
        self.dt = world.timestep * self.decimation
        self._rng = np.random.default_rng()
        self._steps = np.zeros(self.num_envs, dtype=np.int64)
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)
        self._started = False

    # ---- batched spaces ----

    @property
    def observation_space(self):
        """single_observation_space batched: a Box of shape (num_envs, *single shape)"""
        s = self.single_observation_space
        return Box(np.broadcast_to(s.low, (self.num_envs,) + s.shape),
                   np.broadcast_to(s.high, (self.num_envs,) + s.shape),
                   (self.num_envs,) + s.shape, s.dtype)

    @property
    def action_space(self):
        """single_action_space batched: a Box of shape (num_envs, *single shape), seeded by
        reset(seed)"""
        if not hasattr(self, "_action_space"):
            s = self.single_action_space
            self._action_space = Box(np.broadcast_to(s.low, (self.num_envs,) + s.shape),
                                     np.broadcast_to(s.high, (self.num_envs,) + s.shape),
                                     (self.num_envs,) + s.shape, s.dtype)
        return self._action_space

    # ---- the API ----

    def reset(self, seed=None, options=None):
        """Every environment back to a start drawn from the generator seeded with seed (None:
        fresh entropy); returns (obs, info). A start is the task's initial state followed by
        one environment step at the task's neutral action (the simulators settle for
        `decimation` steps), as for the environments reset by step()."""
        if seed is not None:
            seed = as_count(seed, "seed")
        self._rng = np.random.default_rng(seed)
        if seed is not None:
            self.action_space.seed(seed)
        self._reset_envs(np.arange(self.num_envs), options or {})
        status = self.batch.step(self.decimation)
        self._steps[:] = 0
        self._needs_reset = status != 0
        self._started = True
        q, v = self.batch.get_state()
        return self._observe(q, v), {"diverged": status != 0}

    def step(self, actions):
        """One environment step: the actions (num_envs, *single_action_space.shape) held for
        `decimation` simulator steps. Environments that ended at the previous step are reset
        instead (next-step autoreset: their action is ignored, they settle as in reset(), and
        they return their first observation with reward 0 and both flags false)."""
        if not self._started:
            raise RuntimeError("step() before reset(): call env.reset(seed=...) first")
        a = as_array(actions, self.action_space.shape, "actions")
        fresh = self._needs_reset.copy()
        active = ~fresh
        if fresh.any():
            self._reset_envs(np.flatnonzero(fresh), {})
        self._apply(a, active)
        status = self.batch.step(self.decimation)
        q, v = self.batch.get_state()
        self._steps[active] += 1
        self._steps[fresh] = 0
        diverged = (status != 0) & active
        terminated = active & (self._terminated(q, v) | diverged)
        reward = np.where(active, self._reward(q, v, a, terminated), 0.0)
        self._advance(a, active)
        truncated = active & ~terminated & (self._steps >= self.max_steps)
        self._needs_reset = terminated | truncated | (fresh & (status != 0))
        obs = self._observe(q, v)
        return obs, reward, terminated, truncated, {"diverged": diverged, "reset": fresh}

    def close(self):
        """Free the simulators."""
        self.batch = None

    def __repr__(self):
        return (f"<moreau.env.{type(self).__name__}: {self.num_envs} environments, "
                f"{self.batch.threads if self.batch else 0} threads, dt {self.dt:g} s>")


# the legs' joints of Solo-12, in the model's order
SOLO_JOINTS = tuple(f"solo/{leg}_{j}" for leg in ("FL", "FR", "HL", "HR")
                    for j in ("HAA", "HFE", "KFE"))


class SoloVelocity(VecEnv):
    """Solo-12 tracking a commanded base velocity (scenes/solo_stand.yaml: flat ground, μ = 0.9,
    the joints' PD gains k_p = 20 N m/rad, k_d = 0.5 N m s/rad, Δt = 1 ms; one environment step
    = `decimation` = 10 simulator steps, 10 ms).

    Action (12,) in [-1, 1] (clipped): the PD targets of the 12 joints, q_t = q_stand +
    action_scale a (action_scale 0.3 rad), q_stand the "standing" posture.

    Observation (51,) float32: base linear velocity (3, base frame, m/s), base angular velocity
    (3, base frame, rad/s), gravity direction in the base frame (3), the command (vx, vy, yaw
    rate), base height (1, m), joint angles minus q_stand (12, rad), joint velocities (12,
    rad/s), the previous action (12), and a 2 Hz gait clock (sin, cos of 2 pi 2 t).

    Reward per step: exp(-|v_xy - c_xy|^2 / 0.25) + 0.5 exp(-(w_z - c_yaw)^2 / 0.25)
    - 0.5 v_z^2 - 0.05 |w_xy|^2 - 0.01 |a - a_prev|^2 (velocities in the base frame), and -1 on
    the step that terminates.

    Termination: the base below 0.12 m, or tilted beyond 60 degrees (the base's z axis at less
    than 0.5 from the vertical), or a diverged simulator; truncation after max_steps (default
    500: 5 s).

    Reset: the standing posture with every joint offset by U(-0.05, 0.05) rad, at rest, the
    standing PD targets for one environment step (10 ms) before the first observation, and a
    command drawn uniformly from command_low .. command_high (default vx in [-0.3, 0.6] m/s,
    vy in [-0.2, 0.2] m/s, yaw rate in [-0.5, 0.5] rad/s; give equal bounds for a fixed
    command)."""

    def __init__(self, num_envs=16, threads=1, scene=None, decimation=10, max_steps=500,
                 command_low=(-0.3, -0.2, -0.5), command_high=(0.6, 0.2, 0.5),
                 action_scale=0.3, solver=None):
        world = World(scene if scene is not None else _lib.data_path("scenes/solo_stand.yaml"))
        super().__init__(world, num_envs, threads, decimation, max_steps, solver)
        self.command_low = as_array(command_low, (3,), "command_low")
        self.command_high = as_array(command_high, (3,), "command_high")
        if np.any(self.command_low > self.command_high):
            raise ValueError("command_low must be <= command_high")
        self.action_scale = _lib.as_scalar(action_scale, "action_scale", nonnegative=True)
        self._qi = np.array([world.coordinate(j) for j in SOLO_JOINTS])
        self._vi = np.array([world.dof(j) for j in SOLO_JOINTS])
        q0, _ = self.batch.get_state()
        self._q0 = q0[0].copy()
        self._stand = self._q0[self._qi].copy()
        self._target0 = self.batch.get_controls()[1][0].copy()
        self.single_action_space = Box(-1.0, 1.0, (12,), np.float32)
        hi = np.full(51, np.inf, dtype=np.float32)
        self.single_observation_space = Box(-hi, hi, (51,), np.float32)
        self.command = np.zeros((self.num_envs, 3))
        self._prev = np.zeros((self.num_envs, 12))
        self._targets = np.tile(self._target0, (self.num_envs, 1))

    def _reset_envs(self, ids, options):
        """the initial state of environments ids: posture, offsets, command; standing targets"""
        offsets = self._rng.uniform(-0.05, 0.05, size=(len(ids), 12))
        commands = self._rng.uniform(self.command_low, self.command_high, size=(len(ids), 3))
        for row, i in enumerate(ids):
            self.batch.reset(int(i))
            q = self._q0.copy()
            q[self._qi] += offsets[row]
            self.batch.sim(int(i)).set_state(q=q)
        self.command[ids] = commands
        self._prev[ids] = 0.0
        self._targets[ids] = self._target0

    def _apply(self, a, active):
        """the actions of the active environments as PD targets (the others keep theirs)"""
        a = self._clipped = np.minimum(np.maximum(a, -1.0), 1.0)  # np.clip: 10 x slower here
        rows = np.flatnonzero(active)
        self._targets[np.ix_(rows, self._qi)] = self._stand + self.action_scale * a[rows]
        self.batch.set_controls(target=self._targets)

    def _advance(self, a, active):
        """the previous action of the next observation and reward"""
        self._prev[active] = self._clipped[active]

    @staticmethod
    def _frame(q):
        """gravity direction in the base frame (n, 3) and the z-component of the base's z axis"""
        x, y, z, w = q[:, 3], q[:, 4], q[:, 5], q[:, 6]
        g = -np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], 1)
        return g, -g[:, 2]

    def _observe(self, q, v):
        g, _ = self._frame(q)
        t = self._steps[:, None] * self.dt
        clock = np.concatenate([np.sin(4 * np.pi * t), np.cos(4 * np.pi * t)], 1)
        obs = np.concatenate([v[:, 0:3], v[:, 3:6], g, self.command, q[:, 2:3],
                              q[:, self._qi] - self._stand, v[:, self._vi], self._prev, clock], 1)
        return obs.astype(np.float32)

    def _reward(self, q, v, a, terminated):
        a, c = self._clipped, self.command
        track = np.exp(-np.sum((v[:, 0:2] - c[:, 0:2]) ** 2, 1) / 0.25)
        yaw = np.exp(-(v[:, 5] - c[:, 2]) ** 2 / 0.25)
        r = (track + 0.5 * yaw - 0.5 * v[:, 2] ** 2 - 0.05 * np.sum(v[:, 3:5] ** 2, 1)
             - 0.01 * np.sum((a - self._prev) ** 2, 1))
        return r - 1.0 * terminated

    def _terminated(self, q, v):
        _, up = self._frame(q)
        return (q[:, 2] < 0.12) | (up < 0.5)
