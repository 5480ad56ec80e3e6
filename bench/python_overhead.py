#!/usr/bin/python3
"""The Python package's cost per call, against the C step in the same run, and the environment
throughput (docs/benchmarks.md, "Python").

1. sim.step(): per round, K calls of sim.step() on one simulator, one library call of K steps
   (mr_sim_step_n: the loop in C) on a second simulator started from the same state, and K calls
   of sim.step(0) (everything a call costs but the physics: the argument check, ctypes, the
   library's input check). The overhead per call is measured two ways: directly, as the time of
   sim.step(0), and as the difference (K sim.step() - one call of K steps) / K, which the step's
   own variations blur. Scenes: a ball in free fall (no contact: a step of about a microsecond)
   and Solo-12 standing (4 contacts).
2. Batch.step(): the same with batches of N Solo-12 environments: K calls of batch.step(1), K
   bare ctypes calls of mr_batch_step(b, 1) (the least a call from Python costs), one call of K
   steps, and K calls of batch.step(0).
3. moreau.env.SoloVelocity: environment steps per second (wall time; one environment step = 10
   simulator steps) of 32 environments under zero actions, on 1 and 2 threads, rounds
   alternating, and the process's CPU time per environment step (both threads).

Times are the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID: what the call costs, whatever
else the shared machine runs), except for batches on 2 threads and the throughput (wall time).
Each measure is given as mean, median, 99th percentile and minimum over the rounds, in µs per
call. The load average is printed before and after.

    MOREAU_LIB=build/libmoreau.so /usr/bin/python3 bench/python_overhead.py [ROUNDS]
"""
import ctypes
import os
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
import numpy as np  # noqa: E402

import moreau  # noqa: E402
import moreau.env  # noqa: E402
from moreau import _lib  # noqa: E402

BALL = """timestep: 0.001
bodies: [{name: ball, mass: 1.0, position: [0, 0, 1000], geoms: [{type: sphere, radius: 0.1}]}]
"""


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def summary(xs):
    xs = np.asarray(xs)
    return (f"mean {xs.mean():8.3f} median {np.median(xs):8.3f} p99 {np.percentile(xs, 99):8.3f}"
            f" min {xs.min():8.3f}")


def timed(clock, fn):
    t0 = clock()
    fn()
    return clock() - t0


def sim_rounds(world, rounds, k):
    """per round, µs: sim.step(0) per call, (sim.step() x k - C call of k) / k, C step"""
    a, b = moreau.Sim(world), moreau.Sim(world)
    err, clock = _lib._Error(), time.thread_time
    ptr = b._ptr

    def python():
        for _ in range(k):
            a.step()

    def zero():
        for _ in range(k):
            a.step(0)

    def c():
        _lib.lib.mr_sim_step_n(ptr, k, ctypes.byref(err))

    direct, diff, c_step = [], [], []
    for r in range(rounds):
        b.set_state(q=a.q, v=a.v)
        ways = [python, c, zero]
        t = {}
        for fn in ways[r % 3:] + ways[:r % 3]:
            t[fn] = timed(clock, fn)
        direct.append(t[zero] / k * 1e6)
        diff.append((t[python] - t[c]) / k * 1e6)
        c_step.append(t[c] / k * 1e6)
    return direct, diff, c_step


def batch_rounds(world, n, threads, rounds, k):
    """per round, µs: batch.step(0) per call, (batch.step(1) - bare ctypes call) per call,
    (batch.step(1) x k - one call of k) / k, C batch step"""
    batches = [moreau.Batch(world, n, threads) for _ in range(3)]
    err = _lib._Error()
    clock = time.thread_time if threads == 1 else time.perf_counter
    a, raw, one = batches
    ptr_raw, ptr_one = raw._ptr, one._ptr

    def python():
        for _ in range(k):
            a.step(1)

    def bare():
        for _ in range(k):
            _lib.lib.mr_batch_step(ptr_raw, 1, ctypes.byref(err))

    def c():
        _lib.lib.mr_batch_step_checked(ptr_one, k, ctypes.byref(err))

    def zero():
        for _ in range(k):
            a.step(0)

    out = [[], [], [], []]
    for r in range(rounds):
        q, v = a.get_state()
        raw.set_state(q=q, v=v)
        one.set_state(q=q, v=v)
        ways = [python, bare, c, zero]
        t = {}
        for fn in ways[r % 4:] + ways[:r % 4]:
            t[fn] = timed(clock, fn)
        out[0].append(t[zero] / k * 1e6)
        out[1].append((t[python] - t[bare]) / k * 1e6)
        out[2].append((t[python] - t[c]) / k * 1e6)
        out[3].append(t[c] / k * 1e6)
    return out


def env_throughput(num_envs, rounds, steps):
    envs = {t: moreau.env.SoloVelocity(num_envs=num_envs, threads=t, max_steps=10**6)
            for t in (1, 2)}
    out = {1: [], 2: []}
    cpu = {1: [], 2: []}
    zero = np.zeros((num_envs, 12))
    for r in range(rounds):
        for t in ((1, 2) if r % 2 == 0 else (2, 1)):
            env = envs[t]
            env.reset(seed=r)
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(steps):
                env.step(zero)
            out[t].append(num_envs * steps / (time.perf_counter() - t0))
            cpu[t].append((time.process_time() - c0) / (num_envs * steps) * 1e6)
    return out, cpu


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    print(f"python bench: {rounds} rounds, load average {load()}, library "
          f"{moreau.library_path()}")
    path = os.path.join(ROOT, "build", "bench_ball.yaml")
    with open(path, "w") as f:
        f.write(BALL)
    scenes = [("ball in free fall", moreau.World(path)),
              ("Solo-12 standing", moreau.World(os.path.join(ROOT, "scenes", "solo_stand.yaml")))]
    os.unlink(path)
    for name, world in scenes:
        direct, diff, c = sim_rounds(world, rounds, 2000)
        print(f"{name}: sim.step(0)                     {summary(direct)}")
        print(f"{name}: sim.step() - C step, per call   {summary(diff)}")
        print(f"{name}: C step (mr_sim_step_n of 2000)  {summary(c)}")
    solo = scenes[1][1]
    for n, threads in ((1, 1), (16, 1), (16, 2)):
        zero, wrapper, total, c = batch_rounds(solo, n, threads, rounds, 200)
        tag = f"Batch N = {n:2d}, {threads} thread{'s' if threads > 1 else ' '}"
        print(f"{tag}: batch.step(0)                   {summary(zero)}")
        print(f"{tag}: step(1) - bare ctypes call      {summary(wrapper)}")
        print(f"{tag}: step(1) - C batch step          {summary(total)}")
        print(f"{tag}: C batch step (one call of 200)  {summary(c)}")
    tput, cpu = env_throughput(32, max(5, rounds // 3), 100)
    for t in (1, 2):
        xs = np.asarray(tput[t])
        print(f"SoloVelocity, 32 environments, {t} thread(s): env steps/s mean {xs.mean():7.0f} "
              f"median {np.median(xs):7.0f} min {xs.min():7.0f} max {xs.max():7.0f}; process CPU "
              f"µs per env step {summary(cpu[t])}")
    ratio = np.asarray(tput[2]) / np.asarray(tput[1])
    print(f"2 threads / 1 thread, per round: median {np.median(ratio):.2f}, min {ratio.min():.2f},"
          f" max {ratio.max():.2f}")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
