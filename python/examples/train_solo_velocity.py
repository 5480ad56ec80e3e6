#!/usr/bin/python3
"""The cross-entropy method on moreau.env's Solo-12 velocity tracking, in numpy alone: the robot
learns a trot that walks forward at the commanded 0.5 m/s.

The policy is a trot driven by the observation's 2 Hz gait clock (phase p = atan2(sin, cos)),
the diagonal leg pairs (FL, HR) and (FR, HL) half a period apart (p_leg = p or p + pi), with 8
parameters theta:

    hip (HFE) action   o_hip + (A_hip + k_v (c_x - v_x)) sin(p_leg)
    knee (KFE) action  o_knee + A_knee sin(p_leg + phi)     (front and hind legs: their own
                                                             o_knee and A_knee)
    abduction (HAA)    0

in action units (clipped to [-1, 1]; SoloVelocity scales them by 0.3 rad around the standing
posture), with c_x - v_x the forward velocity error read from the observation. Starting from
theta = 0 (the standing posture held), each iteration draws a population of theta from a
Gaussian N(mean, diag(std^2)), runs one episode for each and E more for the mean itself (all in
one vectorised environment: a Batch on the given threads), and refits the mean and the standard
deviation to the elite (the best quarter; a floor of 0.02 keeps the search alive). An episode's
return sums its rewards up to its first termination.

Prints one line per iteration with the return of the mean policy (the average over the E
evaluation episodes, and per environment step) and its mean forward velocity, then the first
and last returns and whether the return improved. Deterministic for a seed, whatever the thread
count.

    /usr/bin/python3 python/examples/train_solo_velocity.py [ITERATIONS] [--threads T]
        [--seed S] [--steps N] [--population P] [--evals E]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np  # noqa: E402

import moreau.env  # noqa: E402

# where the policy's inputs are in SoloVelocity's observation (docs/python.md)
VX, CMD_X, SIN, COS = 0, 9, 49, 50
PHASE = np.array([0.0, np.pi, np.pi, 0.0])  # FL, FR, HL, HR: diagonal pairs in antiphase
FRONT = np.array([True, True, False, False])
NPARAM = 8


def actions(theta, obs):
    """(n, 12) actions of the trots theta (n, 8) at the observations obs (n, 51)"""
    p = np.arctan2(obs[:, SIN], obs[:, COS])[:, None] + PHASE[None]
    err = (obs[:, CMD_X] - obs[:, VX])[:, None]
    a_hip, a_kf, a_kh, phi, o_hip, o_kf, o_kh, k_v = (theta[:, i, None] for i in range(NPARAM))
    a = np.zeros((len(obs), 12))
    a[:, 1::3] = o_hip + (a_hip + k_v * err) * np.sin(p)
    a[:, 2::3] = np.where(FRONT[None], o_kf + a_kf * np.sin(p + phi), o_kh + a_kh * np.sin(p + phi))
    return np.minimum(np.maximum(a, -1.0), 1.0)


def rollout(env, theta, seed, steps):
    """the return of policy theta[k] in environment k (one episode each, stepped together), and
    its mean forward velocity (base frame, m/s) while the episode lasts"""
    obs, _ = env.reset(seed=seed)
    ret, vx = np.zeros(env.num_envs), np.zeros(env.num_envs)
    alive = np.ones(env.num_envs, dtype=bool)
    alive_steps = np.zeros(env.num_envs)
    for _ in range(steps):
        obs, r, term, trunc, _ = env.step(actions(theta, obs))
        ret += np.where(alive, r, 0.0)
        vx += np.where(alive, obs[:, VX], 0.0)
        alive_steps += alive
        alive &= ~(term | trunc)
    return ret, vx / np.maximum(alive_steps, 1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("iterations", type=int, nargs="?", default=20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=200, help="environment steps per episode")
    p.add_argument("--population", type=int, default=16)
    p.add_argument("--evals", type=int, default=4)
    p.add_argument("--std", type=float, default=0.5, help="initial standard deviation")
    args = p.parse_args()

    n = args.population + args.evals
    env = moreau.env.SoloVelocity(num_envs=n, threads=args.threads, max_steps=args.steps,
                                  command_low=(0.5, 0.0, 0.0), command_high=(0.5, 0.0, 0.0))
    rng = np.random.default_rng(args.seed)
    mean, std = np.zeros(NPARAM), np.full(NPARAM, args.std)
    elite = max(2, args.population // 4)
    history = []
    t0 = time.perf_counter()
    for it in range(args.iterations + 1):
        pop = mean + std * rng.standard_normal((args.population, NPARAM))
        ret, vx = rollout(env, np.concatenate([pop, np.repeat(mean[None], args.evals, 0)]),
                          args.seed + it, args.steps)
        score = ret[args.population:].mean()
        history.append(score)
        print(f"iteration {it:3d}  return {score:8.2f}  per step {score / args.steps:6.3f}  "
              f"forward {vx[args.population:].mean():5.2f} m/s  (population best "
              f"{ret[:args.population].max():7.2f})", flush=True)
        if it == args.iterations:
            break
        best = pop[np.argsort(-ret[:args.population])[:elite]]
        mean, std = best.mean(0), best.std(0) + 0.02
    wall = time.perf_counter() - t0
    steps = (args.iterations + 1) * args.steps * n
    print("theta " + " ".join(f"{x:.3f}" for x in mean))
    print(f"trained: return {history[0]:.2f} -> {history[-1]:.2f} (best {max(history):.2f}) in "
          f"{args.iterations} iterations, {steps} environment steps in {wall:.1f} s "
          f"({steps / wall:.0f} steps/s on {args.threads} threads)")
    print("return improved" if history[-1] > history[0] else "return did not improve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
